// compare_jobs: why is B slower (or faster) than A, in one call. Schema and handler
// together; the CLI (`mt compare`) calls CompareJobsStructured.
#pragma once
#include <filesystem>

#include "mcp/registry.h"
#include "tools/compare/compare_jobs.h"
#include "tools/catalog/product_tools.h"
#include "tools/tsdb/tsdb_manager.h"

namespace mt::tools {

mcp::Tool CompareJobsTool(const std::filesystem::path& workspace, TsdbManager& manager);
// Registers compare_jobs on the process-wide DefaultTsdbManager().
void RegisterCompareJobs(mcp::Registry& registry, const ProductOptions& options);

// Validated arguments ({jobs: [A, B, …], …}) → structuredContent, bounded to 2,000 tokens
// (20,000 with detail: full). `call` may be null.
Json CompareJobsStructured(const std::filesystem::path& workspace, const Json& arguments, TsdbManager& manager,
                           mcp::CallContext* call);

}  // namespace mt::tools
