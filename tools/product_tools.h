// Registers mt's product tools (and later its skills as prompts/resources) in an MCP
// registry. `mt serve` calls this; tests call it to get the same catalogue.
#pragma once
#include <filesystem>

#include "mcp/registry.h"

namespace mt::tools {

struct ProductOptions {
  std::filesystem::path workspace;   // the job output directory tree (absolute)
};

void RegisterProductTools(mcp::Registry& registry, const ProductOptions& options);

}  // namespace mt::tools
