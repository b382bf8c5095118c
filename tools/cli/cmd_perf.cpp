// mt perf JOB: perf_analysis from the command line. --json prints exactly the tool's
// structuredContent; otherwise the same text the tool returns.
#include <iostream>

#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/catalog/config.h"
#include "tools/catalog/perf_analysis_tool.h"

namespace mt::tools::cli {
namespace {

constexpr const char* kUsage =
    "usage: mt perf JOB [--workspace DIR] [--config FILE] [--warmup-steps N] [--gpu NAME] [--dtype bf16|fp8]\n"
    "               [--no-report] [--now ISO-8601] [--detail summary|full] [--json]";

}  // namespace

int RunPerf(const std::vector<std::string>& args) {
  Flags flags(args, {"workspace", "config", "warmup-steps", "gpu", "dtype", "now", "detail"}, {"json", "no-report"});
  if (!flags.ok() || flags.positional().size() != 1) {
    std::cerr << "mt perf: " << (flags.ok() ? "expected exactly one JOB" : flags.error()) << "\n" << kUsage << "\n";
    return kExitUsage;
  }
  Json a = Json::object();
  try {
    if (auto w = flags.value("warmup-steps")) {
      size_t used = 0;
      long v = std::stol(*w, &used);
      if (used != w->size() || v < 0 || v > 100000) throw std::invalid_argument("--warmup-steps needs an integer 0..100000");
      a["warmup_steps"] = v;
    }
  } catch (const std::exception&) {
    std::cerr << "mt perf: --warmup-steps needs an integer 0..100000\n" << kUsage << "\n";
    return kExitUsage;
  }
  if (auto g = flags.value("gpu")) a["gpu"] = *g;
  if (auto d = flags.value("dtype")) {
    if (*d != "bf16" && *d != "fp8") {
      std::cerr << "mt perf: --dtype must be bf16 or fp8\n" << kUsage << "\n";
      return kExitUsage;
    }
    a["dtype"] = *d;
  }
  if (auto d = flags.value("detail")) {
    if (*d != "summary" && *d != "full") {
      std::cerr << "mt perf: --detail must be summary or full\n" << kUsage << "\n";
      return kExitUsage;
    }
    a["detail"] = *d;
  }
  if (auto n = flags.value("now")) a["now"] = *n;
  if (flags.has("no-report")) a["report"] = false;
  try {
    Config config = ResolveConfig(flags.value("config"), flags.value("workspace"));
    JobFiles job = Workspace(config.workspace).Resolve(flags.positional()[0]);
    Json out = PerfAnalysisStructured(job, a);
    if (flags.has("json")) std::cout << out.dump() << "\n";
    else std::cout << PerfText(out) << "\n";
    return kExitOk;
  } catch (const std::invalid_argument& e) {
    std::cerr << "mt perf: " << e.what() << "\n" << kUsage << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "mt perf: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace mt::tools::cli
