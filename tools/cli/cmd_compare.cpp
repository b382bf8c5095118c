// mt compare A B [C…]: compare_jobs from the command line. --json prints exactly the
// tool's structuredContent; otherwise the same text the tool returns.
#include <iostream>

#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/catalog/compare_jobs_tool.h"
#include "tools/catalog/config.h"
#include "tools/catalog/validated_input.h"

namespace mt::tools::cli {
namespace {

constexpr const char* kUsage =
    "usage: mt compare A B [C…] [--workspace DIR] [--config FILE] [--warmup-steps N] [--no-tsdb] [--now ISO-8601]\n"
    "                  [--detail summary|full] [--source NAME] [--json]\n"
    "  --source: a metrics source of mt.yaml (metrics.sources) holding both jobs' hosts, instead of their own TSDBs";

}  // namespace

int RunCompare(const std::vector<std::string>& args) {
  Flags flags(args, {"workspace", "config", "warmup-steps", "now", "detail", "source"}, {"json", "no-tsdb"});
  if (!flags.ok() || flags.positional().size() < 2 || flags.positional().size() > 8) {
    std::cerr << "mt compare: " << (flags.ok() ? "expected 2 to 8 jobs" : flags.error()) << "\n" << kUsage << "\n";
    return kExitUsage;
  }
  Json a = Json::object();
  a["jobs"] = flags.positional();
  if (!CopyIntegerFlag(flags, "warmup-steps", a, "warmup_steps")) {
    std::cerr << "mt compare: --warmup-steps takes a whole number (0-100000)\n" << kUsage << "\n";
    return kExitUsage;
  }
  for (const char* f : {"detail", "now", "source"}) CopyStringFlag(flags, f, a, f);
  if (flags.has("no-tsdb")) a["tsdb"] = false;
  try {
    Config config = ResolveConfig(flags.value("config"), flags.value("workspace"));
    Json out = CompareJobsStructured(
        config.workspace, ValidatedInput<CompareJobsInput>(CompareJobsTool(config.workspace, DefaultTsdbManager()), a),
        DefaultTsdbManager(), config.metrics_sources, nullptr);
    if (flags.has("json")) std::cout << out.dump() << "\n";
    else std::cout << CompareText(out) << "\n";
    return kExitOk;
  } catch (const std::invalid_argument& e) {
    std::cerr << "mt compare: " << e.what() << "\n" << kUsage << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "mt compare: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace mt::tools::cli
