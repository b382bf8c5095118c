// mt jobs: list_jobs from the command line.
#include <iomanip>
#include <iostream>

#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/catalog/config.h"
#include "tools/catalog/list_jobs_tool.h"
#include "tools/catalog/validated_input.h"

namespace mt::tools::cli {

int RunJobs(const std::vector<std::string>& args) {
  static const char* kUsage =
      "usage: mt jobs [--workspace DIR] [--config FILE] [--status S] [--limit N] [--now ISO-8601] [--json]";
  Flags flags(args, {"workspace", "config", "status", "limit", "now"}, {"json", "all"});
  if (!flags.ok() || !flags.positional().empty()) {
    std::cerr << "mt jobs: " << (flags.ok() ? "unexpected argument " + flags.positional()[0] : flags.error()) << "\n"
              << kUsage << "\n";
    return kExitUsage;
  }
  Json a = Json::object();
  CopyStringFlag(flags, "status", a, "status");
  CopyStringFlag(flags, "now", a, "now");
  if (!CopyIntegerFlag(flags, "limit", a, "limit")) {
    std::cerr << "mt jobs: --limit takes a whole number (1-500)\n" << kUsage << "\n";
    return kExitUsage;
  }
  try {
    Config config = ResolveConfig(flags.value("config"), flags.value("workspace"));
    Json out = mcp::Encode(ListJobs(config.workspace, ValidatedInput<ListJobsInput>(ListJobsTool(config.workspace), a)));
    if (flags.has("json")) {
      std::cout << out.dump() << "\n";
      return kExitOk;
    }
    auto s = [](const Json& v) { return v.is_null() ? std::string("-") : v.is_string() ? v.get<std::string>() : v.dump(); };
    std::cout << std::left << std::setw(28) << "ID" << std::setw(11) << "STATUS" << std::setw(8) << "STEP" << std::setw(6)
              << "NODES" << std::setw(6) << "TSDB" << std::setw(22) << "START" << "NAME\n";
    for (const auto& j : out["jobs"])
      std::cout << std::setw(28) << s(j["id"]) << std::setw(11) << s(j["status"]) << std::setw(8) << s(j["last_step"])
                << std::setw(6) << s(j["nodes"]) << std::setw(6) << (j["has_tsdb"].get<bool>() ? "yes" : "no")
                << std::setw(22) << s(j["start_time"]) << s(j["name"]) << "\n";
    if (out["omitted"].is_string()) std::cout << "[" << s(out["omitted"]) << "]\n";
    for (const auto& w : out["warnings"]) std::cerr << "warning: " << w.get<std::string>() << "\n";
    return kExitOk;
  } catch (const std::invalid_argument& e) {
    std::cerr << "mt jobs: " << e.what() << "\n" << kUsage << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "mt jobs: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace mt::tools::cli
