// The `mt` CLI's subcommands. Each lives in its own cli/cmd_<name>.cpp and is listed once
// in cli/commands.cpp. Exit codes (DESIGN §4): 0 ok, 1 the operation failed, 2 usage error.
#pragma once
#include <string>
#include <vector>

namespace mt::tools::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;

struct Command {
  const char* name;
  const char* usage;     // e.g. "mt triage JOB|LOG [--workspace DIR] [--now ISO-8601] [--json]"
  const char* summary;   // one line
  int (*run)(const std::vector<std::string>& args);   // args after the subcommand name
};

const std::vector<Command>& Commands();

}  // namespace mt::tools::cli
