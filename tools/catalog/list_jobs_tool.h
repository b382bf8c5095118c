// list_jobs: what jobs does this workspace hold, and how did each end? A quick look at
// each log's head and tail (not a full scan), so it stays fast on workspaces of
// multi-GB logs; triage_log gives the exact answer for one job.
#pragma once
#include <filesystem>

#include "mcp/registry.h"
#include "tools/catalog/product_tools.h"

namespace mt::tools {

mcp::Tool ListJobsTool(const std::filesystem::path& workspace);
void RegisterListJobs(mcp::Registry& registry, const ProductOptions& options);

// Validated arguments → structuredContent. Throws WorkspaceError / std::invalid_argument.
Json ListJobsStructured(const std::filesystem::path& workspace, const Json& arguments);

}  // namespace mt::tools
