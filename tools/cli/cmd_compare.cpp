// mt compare A B [C…]: compare_jobs from the command line. --json prints exactly the
// tool's structuredContent; otherwise the same text the tool returns.
#include <iostream>

#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/catalog/compare_jobs_tool.h"
#include "tools/catalog/config.h"

namespace mt::tools::cli {
namespace {

constexpr const char* kUsage =
    "usage: mt compare A B [C…] [--workspace DIR] [--config FILE] [--warmup-steps N] [--no-tsdb] [--now ISO-8601]\n"
    "                  [--detail summary|full] [--json]";

}  // namespace

int RunCompare(const std::vector<std::string>& args) {
  Flags flags(args, {"workspace", "config", "warmup-steps", "now", "detail"}, {"json", "no-tsdb"});
  if (!flags.ok() || flags.positional().size() < 2 || flags.positional().size() > 8) {
    std::cerr << "mt compare: " << (flags.ok() ? "expected 2 to 8 jobs" : flags.error()) << "\n" << kUsage << "\n";
    return kExitUsage;
  }
  Json a = Json::object();
  a["jobs"] = flags.positional();
  if (auto w = flags.value("warmup-steps")) {
    try {
      size_t used = 0;
      long v = std::stol(*w, &used);
      if (used != w->size() || v < 0 || v > 100000) throw std::invalid_argument(*w);
      a["warmup_steps"] = v;
    } catch (const std::exception&) {
      std::cerr << "mt compare: --warmup-steps needs an integer 0..100000\n" << kUsage << "\n";
      return kExitUsage;
    }
  }
  if (auto d = flags.value("detail")) {
    if (*d != "summary" && *d != "full") {
      std::cerr << "mt compare: --detail must be summary or full\n" << kUsage << "\n";
      return kExitUsage;
    }
    a["detail"] = *d;
  }
  if (auto n = flags.value("now")) a["now"] = *n;
  if (flags.has("no-tsdb")) a["tsdb"] = false;
  try {
    Config config = ResolveConfig(flags.value("config"), flags.value("workspace"));
    Json out = CompareJobsStructured(config.workspace, a, DefaultTsdbManager(), nullptr);
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
