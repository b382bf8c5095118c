// The tool reference (docs/tool-reference.md), generated from what the registry serves:
// every tool's description, annotations, input arguments and output fields, every prompt
// with its arguments, every fixed resource. `mt reference` prints it; a test fails when
// the checked-in file differs, so the document cannot drift from the schemas.
#pragma once
#include <string>

#include "mcp/registry.h"

namespace mt::tools {

std::string ToolReferenceMarkdown(const mcp::Registry& registry);

}  // namespace mt::tools
