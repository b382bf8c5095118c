#include "tools/cli/command.h"

namespace mt::tools::cli {

int RunServe(const std::vector<std::string>& args);

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = {
      {"serve", "mt serve [--stdio] [--http ADDR] [--workspace DIR] [--config FILE]",
       "run the MCP server (stdio by default)", RunServe},
  };
  return commands;
}

}  // namespace mt::tools::cli
