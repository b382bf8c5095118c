// triage_log: why did this job stop (or is it still fine)? Schema and handler together;
// the CLI (`mt triage`) calls TriageLogStructured directly.
#pragma once
#include <filesystem>

#include "mcp/registry.h"
#include "tools/product_tools.h"
#include "tools/workspace.h"

namespace mt::tools {

mcp::Tool TriageLogTool(const std::filesystem::path& workspace);
void RegisterTriageLog(mcp::Registry& registry, const ProductOptions& options);

// Validated arguments (job already resolved) → structuredContent. Throws
// std::invalid_argument for bad arguments, std::runtime_error when the log is unreadable.
// `scan_meta` receives whether the scan came from the cache (see TriageJob).
Json TriageLogStructured(const JobFiles& job, const Json& arguments, Json* scan_meta = nullptr);

}  // namespace mt::tools
