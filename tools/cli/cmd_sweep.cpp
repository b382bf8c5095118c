// mt sweep: CI regression sweeps. Runs the spec's models on one or two code states through
// the launcher under the `ci` approval policy, measures steady-state TGS per (model, nodes),
// compares against a baseline file or the first state, and reports as a markdown table
// (stdout, --markdown FILE) and JUnit XML (--junit FILE). Exit 0 when nothing regressed,
// 1 on a regression beyond the threshold or a model that newly fails, 2 on usage errors.
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include "base/atomic_file.h"
#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/catalog/config.h"
#include "tools/gate/sweep_runner.h"

namespace mt::tools::cli {

namespace {


constexpr const char* kUsage =
    "usage: mt sweep --spec FILE [--state NAME=DIR]... [--baseline FILE] [--write-baseline FILE]\n"
    "                [--markdown FILE] [--junit FILE] [--threshold PCT] [--workspace DIR] [--config FILE]\n"
    "  one --state (default: current=.) compares against --baseline FILE when given;\n"
    "  two --state flags compare the second against the first.\n";

int Usage(const std::string& why) {
  std::cerr << "mt sweep: " << why << "\n" << kUsage;
  return kExitUsage;
}

}  // namespace

int RunSweep(const std::vector<std::string>& args) {
  Flags flags(args, {"spec", "state", "baseline", "write-baseline", "markdown", "junit", "threshold", "workspace", "config"}, {});
  if (!flags.ok()) return Usage(flags.error());
  if (!flags.positional().empty()) return Usage("unexpected argument " + flags.positional()[0]);
  if (!flags.value("spec")) return Usage("--spec FILE is required");

  SweepSpec spec;
  Config config;
  try {
    spec = LoadSweepSpec(*flags.value("spec"));
    config = ResolveConfig(flags.value("config"), flags.value("workspace"));
  } catch (const std::exception& e) {
    std::cerr << "mt sweep: " << e.what() << "\n";
    return kExitFailed;
  }
  if (auto t = flags.value("threshold")) {
    try {
      size_t used = 0;
      spec.threshold_pct = std::stod(*t, &used);
      if (used != t->size() || !(spec.threshold_pct > 0 && spec.threshold_pct < 100)) throw std::invalid_argument(*t);
    } catch (const std::exception&) {
      return Usage("--threshold needs a percentage between 0 and 100, got '" + *t + "'");
    }
  }
  std::vector<SweepState> states;
  for (const auto& s : flags.values("state")) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size()) return Usage("--state needs NAME=DIR, got '" + s + "'");
    SweepState st{s.substr(0, eq), s.substr(eq + 1)};
    for (char c : st.name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_')
        return Usage("state name '" + st.name + "' may hold only letters, digits, '-' and '_'");
    states.push_back(std::move(st));
  }
  if (states.empty()) states.push_back({"current", "."});
  if (states.size() > 2) return Usage("at most two --state flags (a baseline state and the state under test)");
  if (states.size() == 2 && states[0].name == states[1].name) return Usage("the two states need different names");
  if (states.size() == 2 && flags.value("baseline")) return Usage("--baseline compares one state; with two states the first is the baseline");

  std::vector<SweepResult> baseline;
  if (auto b = flags.value("baseline")) {
    std::ifstream in(*b, std::ios::binary);
    if (!in) {
      std::cerr << "mt sweep: cannot read the baseline file " << *b << "\n";
      return kExitFailed;
    }
    try {
      std::stringstream text;
      text << in.rdbuf();
      baseline = SweepResultsFromJson(Json::parse(text.str()), *b);
    } catch (const std::exception& e) {
      std::cerr << "mt sweep: " << (dynamic_cast<const Json::exception*>(&e) ? *b + ": not JSON: " : "") << e.what() << "\n";
      return kExitFailed;
    }
  }

  SweepEnv env;
  env.approval = ApprovalEnvFrom(config);
  env.progress = [](const std::string& line) { std::cerr << "mt sweep: " << line << "\n" << std::flush; };
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<SweepResult> results;
  if (auto e = mt::tools::RunSweep(spec, states, env, &results); !e.empty()) {
    std::cerr << "mt sweep: " << e << "\n";
    return kExitFailed;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::vector<SweepResult> current;
  for (const auto& r : results) {
    if (states.size() == 2 && r.state == states[0].name) baseline.push_back(r);
    if (r.state == states.back().name) current.push_back(r);
  }
  SweepComparison cmp = CompareSweep(baseline, current, spec.threshold_pct);
  if (baseline.empty()) cmp.baseline_label = "no baseline";
  const std::string markdown = SweepMarkdown(cmp, spec.name);
  std::cout << markdown << std::flush;

  int rc = cmp.failed() ? kExitFailed : kExitOk;
  auto write = [&rc](const std::optional<std::string>& path, const std::string& text) {
    if (!path) return;
    if (base::Status st = base::WriteFileAtomic(*path, text); !st.ok()) {
      std::cerr << "mt sweep: " << st.message() << "\n";
      rc = kExitFailed;
    }
  };
  write(flags.value("markdown"), markdown);
  write(flags.value("junit"), SweepJUnit(cmp, spec.name, seconds));
  write(flags.value("write-baseline"), SweepResultsToJson(current, spec.name).dump(2) + "\n");
  return rc;
}

}  // namespace mt::tools::cli
