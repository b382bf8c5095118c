// mt query JOB: query_tsdb from the command line. Exactly one of --discover, --promql Q,
// --playbook NAME|auto, --correlate TIME|STEP. --json prints the tool's structuredContent.
// The Prometheus this starts on a copy of the job's TSDB is stopped before mt exits.
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/catalog/config.h"
#include "tools/tsdb/prometheus_client.h"
#include "tools/catalog/query_tsdb_tool.h"
#include "tools/catalog/validated_input.h"

namespace mt::tools::cli {
namespace {

constexpr const char* kUsage =
    "usage: mt query JOB [--workspace DIR] [--config FILE]\n"
    "                (--discover | --promql Q [--time T | --start T --end T [--step S]] [--points N]\n"
    "                 | --playbook NAME|auto [--start T --end T] | --correlate TIME|STEP)\n"
    "                [--now ISO-8601] [--detail summary|full] [--source NAME] [--prometheus PATH] [--json]\n"
    "  playbooks: hang heartbeat host_oom node_failure gpu_health network_health training_stability auto\n"
    "  times: ISO-8601 or Unix seconds; --correlate takes a time, or a training step (a number < 10^9)\n"
    "  --source: a metrics source of mt.yaml (metrics.sources) instead of the job's own TSDB";

// "60", "60s", "5m", "1h" → seconds.
std::optional<double> ParseStep(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char unit = s.back();
  double mult = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 0;
  std::string num = mult ? s.substr(0, s.size() - 1) : s;
  if (!mult) mult = 1;
  try {
    size_t used = 0;
    double v = std::stod(num, &used);
    if (used != num.size() || v <= 0) return std::nullopt;
    return v * mult;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

int RunQuery(const std::vector<std::string>& args) {
  Flags flags(args,
              {"workspace", "config", "promql", "start", "end", "step", "time", "points", "playbook", "correlate", "now",
               "detail", "prometheus", "source"},
              {"discover", "json"});
  auto usage = [&](const std::string& why) {
    std::cerr << "mt query: " << why << "\n" << kUsage << "\n";
    return kExitUsage;
  };
  if (!flags.ok()) return usage(flags.error());
  if (flags.positional().size() != 1) return usage("expected exactly one JOB");
  int modes = flags.has("discover") + !!flags.value("promql") + !!flags.value("playbook") + !!flags.value("correlate");
  if (modes != 1) return usage("give exactly one of --discover, --promql, --playbook, --correlate");

  Json a = {{"job", flags.positional()[0]}};
  if (flags.has("discover")) a["mode"] = "discover";
  if (auto q = flags.value("promql")) {
    a["mode"] = "promql";
    a["query"] = *q;
  }
  if (auto p = flags.value("playbook")) {
    a["mode"] = "playbook";
    a["playbook"] = *p;
  }
  if (auto c = flags.value("correlate")) {
    a["mode"] = "correlate";
    bool digits = !c->empty() && c->find_first_not_of("0123456789") == std::string::npos;
    if (digits && c->size() < 10) a["training_step"] = std::stol(*c);
    else a["time"] = *c;
  }
  for (const char* k : {"start", "end", "time", "now"})
    if (auto v = flags.value(k)) a[k] = *v;
  if (auto s = flags.value("step")) {
    auto v = ParseStep(*s);
    if (!v) return usage("--step needs a duration such as 60, 60s, 5m");
    a["step"] = *v;
  }
  if (!CopyIntegerFlag(flags, "points", a, "points")) return usage("--points takes a whole number (0-500)");
  CopyStringFlag(flags, "detail", a, "detail");
  CopyStringFlag(flags, "source", a, "source");
  try {
    TsdbManagerOptions opts = TsdbManagerOptions::FromEnvironment();
    if (auto p = flags.value("prometheus")) opts.prometheus_binary = *p;
    Config config = ResolveConfig(flags.value("config"), flags.value("workspace"));
    TsdbManager manager(opts);   // stops its Prometheus when this command returns
    const QueryTsdbInput in = ValidatedInput<QueryTsdbInput>(QueryTsdbTool(config.workspace, manager), a);
    JobFiles job = Workspace(config.workspace).Resolve(in.job);
    Json out = QueryTsdbStructured(job, in, manager, config.metrics_sources, nullptr);
    if (flags.has("json")) std::cout << out.dump() << "\n";
    else std::cout << QueryTsdbText(out) << "\n";
    return kExitOk;
  } catch (const std::invalid_argument& e) {
    std::cerr << "mt query: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "mt query: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace mt::tools::cli
