// The CLI's way into a tool: the same input schema check a tools/call request gets, then the
// arguments decoded into the tool's input type. Used where the CLI must call the tool's
// core itself (a log path given on the command line is not a workspace job).
#pragma once
#include <stdexcept>

#include "mcp/tool.h"
#include "mcp/typed.h"

namespace mt::tools {

// Throws std::invalid_argument("Invalid arguments: arguments.rank: must be <= …") when the
// arguments do not conform to the tool's input schema.
template <class In>
In ValidatedInput(const mcp::Tool& tool, const Json& arguments) {
  if (auto err = mcp::CheckToolArguments(tool, arguments)) throw std::invalid_argument(*err);
  return mcp::Decode<In>(arguments);
}

}  // namespace mt::tools
