// triage_log: why did this job stop (or is it still fine)? Schema and handler together;
// the CLI (`mt triage`) calls TriageLogStructured directly.
#pragma once
#include <filesystem>

#include "mcp/registry.h"
#include "tools/catalog/product_tools.h"
#include "tools/logs/triage.h"
#include "tools/logs/workspace.h"

namespace mt::tools {

mcp::Tool TriageLogTool(const std::filesystem::path& workspace);
void RegisterTriageLog(mcp::Registry& registry, const ProductOptions& options);


}  // namespace mt::tools
