// read_log: a bounded window of a job's log — by line range, srun task or regex with
// context — so an agent never needs `cat` on a 2 GB file.
#pragma once
#include <filesystem>

#include "mcp/registry.h"
#include "tools/catalog/product_tools.h"
#include "tools/logs/workspace.h"

namespace mt::tools {

mcp::Tool ReadLogTool(const std::filesystem::path& workspace);
void RegisterReadLog(mcp::Registry& registry, const ProductOptions& options);

// Validated arguments (job resolved) → structuredContent. `ws` confines `file` to the
// job directory (null for a log given directly on the command line).
Json ReadLogStructured(const JobFiles& job, const Json& arguments, const Workspace* ws);

}  // namespace mt::tools
