// mt nodes: the node ledger across jobs (tools/supervise/node_ledger.h). Lists each host
// implicated in failures with the repeat-offender verdict, and records an implication or a
// clean job by hand (an operator's own finding; supervised runs record theirs themselves).
//   mt nodes [--k N] [--window-days D] [--json]
//   mt nodes implicate HOST --job JOB --class CLASS [--evidence TEXT]
//   mt nodes clean HOST --job JOB
#include <iostream>

#include "launcher/approval/audit.h"
#include "tools/catalog/config.h"
#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/supervise/node_ledger.h"

namespace mt::tools::cli {
namespace {

constexpr const char* kUsage =
    "usage: mt nodes [--k N] [--window-days D] [--json] [--workspace DIR] [--config FILE]\n"
    "       mt nodes implicate HOST --job JOB --class CLASS [--evidence TEXT]\n"
    "       mt nodes clean HOST --job JOB\n";

int Usage(const std::string& why) {
  std::cerr << "mt nodes: " << why << "\n" << kUsage;
  return kExitUsage;
}

// Reads a positive integer flag into *out (unchanged when absent); false after printing the usage error.
bool PositiveFlag(const Flags& flags, const std::string& name, int64_t* out) {
  auto v = flags.value(name);
  if (!v) return true;
  try {
    size_t used = 0;
    const long long n = std::stoll(*v, &used);
    if (used != v->size() || n < 1 || n > 100000) throw std::invalid_argument(*v);
    *out = n;
    return true;
  } catch (const std::exception&) {
    Usage("--" + name + " needs a whole number from 1 to 100000, got '" + *v + "'");
    return false;
  }
}

int List(const NodeLedger& ledger, const Flags& flags) {
  OffenderRule rule;
  int64_t k = rule.k, days = rule.window_s / 86400;
  if (!PositiveFlag(flags, "k", &k) || !PositiveFlag(flags, "window-days", &days)) return kExitUsage;
  rule.k = static_cast<int>(k);
  rule.window_s = days * 86400;
  std::vector<NodeStanding> standings;
  if (base::Status st = ledger.Standings(rule, launch::approval::UnixNow(), &standings); !st.ok()) {
    std::cerr << "mt nodes: " << st.message() << "\n";
    return kExitFailed;
  }
  if (flags.has("json")) {
    Json out = {{"ledger", ledger.file().string()}, {"k", rule.k}, {"window_days", days}, {"nodes", Json::array()}};
    for (const auto& s : standings)
      out["nodes"].push_back({{"host", s.host}, {"implications", s.implications}, {"excluded", s.excluded},
                              {"last_class", s.last_class}, {"last_job", s.last_job},
                              {"last_time", s.last_time ? launch::approval::IsoUtc(s.last_time) : ""}});
    std::cout << out.dump() << "\n";
    return kExitOk;
  }
  if (standings.empty()) {
    std::cout << "no host implicated in the last " << days << " days (" << ledger.file().string() << ")\n";
    return kExitOk;
  }
  std::cout << "host  implications  status  last (class, job, time)   [exclude after " << rule.k << " in " << days << " days]\n";
  for (const auto& s : standings)
    std::cout << s.host << "  " << s.implications << "  " << (s.excluded ? "EXCLUDED" : s.implications ? "watch" : "released")
              << "  " << s.last_class << ", " << s.last_job << ", "
              << (s.last_time ? launch::approval::IsoUtc(s.last_time) : "-") << "\n";
  return kExitOk;
}

int Record(const NodeLedger& ledger, const Flags& flags, const std::string& event) {
  if (flags.positional().size() != 2) return Usage(event + " needs exactly one HOST");
  LedgerEntry e;
  e.time = launch::approval::UnixNow();
  e.host = flags.positional()[1];
  e.event = event == "implicate" ? "implicated" : "clean";
  e.job = flags.value("job").value_or("");
  if (e.job.empty()) return Usage(event + " needs --job JOB");
  if (event == "implicate") {
    e.cls = flags.value("class").value_or("");
    if (e.cls.empty()) return Usage("implicate needs --class CLASS (the failure's triage class)");
    e.evidence = flags.value("evidence").value_or("");
    e.source = "mt nodes (by hand)";
  }
  if (base::Status st = ledger.Append({e}); !st.ok()) {
    std::cerr << "mt nodes: " << st.message() << "\n";
    return kExitFailed;
  }
  std::cout << "recorded: " << e.host << " " << e.event << " (job " << e.job << ")\n";
  return kExitOk;
}

}  // namespace

int RunNodes(const std::vector<std::string>& args) {
  Flags flags(args, {"k", "window-days", "workspace", "config", "job", "class", "evidence"}, {"json"});
  if (!flags.ok()) return Usage(flags.error());
  std::filesystem::path workspace;
  try {
    workspace = ResolveConfig(flags.value("config"), flags.value("workspace")).workspace;
  } catch (const std::exception& e) {
    std::cerr << "mt nodes: " << e.what() << "\n";
    return kExitFailed;
  }
  const NodeLedger ledger = NodeLedger::ForWorkspace(workspace);
  if (flags.positional().empty()) return List(ledger, flags);
  const std::string verb = flags.positional()[0];
  if (verb == "implicate" || verb == "clean") return Record(ledger, flags, verb);
  return Usage("unknown action '" + verb + "'");
}

}  // namespace mt::tools::cli
