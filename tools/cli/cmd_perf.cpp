// mt perf JOB: perf_analysis from the command line. --json prints exactly the tool's
// structuredContent; otherwise the same text the tool returns.
#include <iostream>

#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/catalog/config.h"
#include "tools/catalog/perf_analysis_tool.h"
#include "tools/catalog/validated_input.h"

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
  if (!CopyIntegerFlag(flags, "warmup-steps", a, "warmup_steps")) {
    std::cerr << "mt perf: --warmup-steps takes a whole number (0-100000)\n" << kUsage << "\n";
    return kExitUsage;
  }
  for (const char* f : {"gpu", "dtype", "detail", "now"}) CopyStringFlag(flags, f, a, f);
  if (flags.has("no-report")) a["report"] = false;
  try {
    Config config = ResolveConfig(flags.value("config"), flags.value("workspace"));
    a["job"] = flags.positional()[0];
    const PerfInput in = ValidatedInput<PerfInput>(PerfAnalysisTool(config.workspace), a);
    Json out = AnalyzeJobPerf(config.workspace, config.ApprovalsDir(), in).structured;
    BoundPerfAnswer(in, out);
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
