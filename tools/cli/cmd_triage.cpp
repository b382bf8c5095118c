// mt triage JOB|LOG: triage_log from the command line. A JOB names a job in the
// workspace; an existing file path is triaged directly (the user's own shell could read
// it anyway). --json prints exactly the tool's structuredContent.
#include <sys/stat.h>

#include <iostream>

#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/catalog/config.h"
#include "tools/catalog/triage_log_tool.h"
#include "tools/catalog/validated_input.h"
#include "tools/logs/scan_cache.h"

namespace mt::tools::cli {
namespace {

constexpr const char* kUsage =
    "usage: mt triage JOB|LOG [--workspace DIR] [--config FILE] [--now ISO-8601] [--detail summary|full]\n"
    "                 [--heartbeat-timeout SECONDS] [--json]";

bool IsFile(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

std::string Str(const Json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

void PrintHuman(const Json& t) {
  std::cout << t["headline"].get<std::string>() << "\n";
  const Json& j = t["job"];
  std::cout << "  job:       " << Str(j["id"]) << "  " << Str(j["name"]) << "  (" << Str(j["nodes"]) << " nodes, "
            << Str(j["model"]) << ")\n  log:       " << Str(j["log"]) << "\n";
  std::cout << "  stage:     " << Str(t["stage"]) << (t["training_phase"].is_string() ? " (" + Str(t["training_phase"]) + ")" : "")
            << "   exit code: " << Str(t["exit_code"]) << "\n";
  const Json& p = t["progress"];
  std::cout << "  progress:  steps " << Str(t["first_step"]) << ".." << Str(t["last_step"]) << " of " << Str(p["total_steps"])
            << ", steady " << Str(p["steady_step_seconds"]) << " s/step, last progress " << Str(p["last_progress_time"]) << " ("
            << Str(p["last_progress_source"]) << ")";
  if (p["expected_step_now"].is_number()) std::cout << ", expected step now " << Str(p["expected_step_now"]);
  if (p["last_checkpoint_step"].is_number())
    std::cout << ", last checkpoint " << Str(p["last_checkpoint_step"]) << " (" << Str(p["progress_lost_steps"]) << " steps lost)";
  if (p["eta_seconds"].is_number()) std::cout << ", ETA " << Str(p["eta_seconds"]) << " s";
  std::cout << "\n  hang rule: " << Str(t["hang"]["rule"]) << "; silent " << Str(t["hang"]["silent_seconds"]) << " s\n";
  if (t["heartbeat"].is_object()) {
    const Json& h = t["heartbeat"];
    std::cout << "  heartbeat: crash " << Str(h["crash_time"]) << ", timeout " << Str(h["timeout_seconds"]) << " s, stop "
              << Str(h["heartbeat_stop_time"]) << ", false positive: " << (h["false_positive"].get<bool>() ? "yes" : "no")
              << "\n             " << Str(h["reasoning"]) << "\n";
  }
  if (t["tgs"].is_object()) {
    const Json& g = t["tgs"];
    std::cout << "  tgs:       " << Str(g["pattern"]) << ", steady " << Str(g["steady_mean"]) << " → tail " << Str(g["tail_mean"])
              << " (" << Str(g["degradation_pct"]) << " % lower)\n";
    for (const auto& ph : g["phases"])
      std::cout << "             steps " << Str(ph["start_step"]) << "–" << Str(ph["end_step"]) << ": " << Str(ph["mean"]) << "\n";
  }
  if (t["rccl_init_waves"].is_object())
    std::cout << "  rccl init: " << Str(t["rccl_init_waves"]["count"]) << " waves\n";
  std::cout << "  evidence (" << Str(t["evidence_total"]) << "):\n";
  for (const auto& e : t["evidence"])
    std::cout << "    " << Str(e["file"]) << ":" << Str(e["line"]) << (e["rank"].is_number() ? " [" + Str(e["rank"]) + "]" : "")
              << "  " << Str(e["text"]).substr(0, 200) << "\n";
  if (t["remedy"].is_string()) std::cout << "  remedy:    " << Str(t["remedy"]) << "\n";
  for (const auto& n : t["next_steps"])
    std::cout << "  next:      " << Str(n["tool"]) << " " << n["arguments"].dump() << "  — " << Str(n["reason"]) << "\n";
  if (t["omitted"].is_string()) std::cout << "  [" << Str(t["omitted"]) << "]\n";
}

}  // namespace

int RunTriage(const std::vector<std::string>& args) {
  Flags flags(args, {"workspace", "config", "now", "detail", "heartbeat-timeout"}, {"json"});
  if (!flags.ok() || flags.positional().size() != 1) {
    std::cerr << "mt triage: " << (flags.ok() ? "expected exactly one JOB or LOG" : flags.error()) << "\n" << kUsage << "\n";
    return kExitUsage;
  }
  Json a = Json::object();
  if (auto now = flags.value("now")) a["now"] = *now;
  CopyStringFlag(flags, "detail", a, "detail");
  if (!CopyIntegerFlag(flags, "heartbeat-timeout", a, "heartbeat_timeout_seconds")) {
    std::cerr << "mt triage: --heartbeat-timeout takes a whole number of seconds\n" << kUsage << "\n";
    return kExitUsage;
  }
  const std::string& target = flags.positional()[0];
  try {
    JobFiles job;
    std::filesystem::path workspace = ".";
    if (IsFile(target)) {
      job = DescribeLogFile(target);
    } else {
      workspace = ResolveConfig(flags.value("config"), flags.value("workspace")).workspace;
      job = Workspace(workspace).Resolve(target);
    }
    a["job"] = target;
    const TriageLogInput in = ValidatedInput<TriageLogInput>(TriageLogTool(workspace), a);
    Json out = TriageJob(job, TriageOptionsFrom(in), ScanCache::Shared());
    if (flags.has("json")) std::cout << out.dump() << "\n";
    else PrintHuman(out);
    return kExitOk;
  } catch (const std::invalid_argument& e) {
    std::cerr << "mt triage: " << e.what() << "\n" << kUsage << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "mt triage: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace mt::tools::cli
