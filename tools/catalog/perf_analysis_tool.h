// perf_analysis: steady-state throughput, MFU, step time, jitter, loss trend, phases,
// periodic overhead and profiling artifacts of one job, plus an HTML report in the job
// directory. Schema and handler together; the CLI (`mt perf`) calls PerfAnalysisStructured.
#pragma once
#include <filesystem>

#include "mcp/registry.h"
#include "tools/perf/perf_analysis.h"
#include "tools/catalog/product_tools.h"
#include "tools/logs/workspace.h"

namespace mt::tools {

mcp::Tool PerfAnalysisTool(const std::filesystem::path& workspace);
void RegisterPerfAnalysis(mcp::Registry& registry, const ProductOptions& options);

// Validated arguments → options (throws std::invalid_argument for bad values).
PerfOptions PerfOptionsFromArguments(const Json& arguments);
// Job resolved, arguments validated → structuredContent (bounded to 2,000 tokens, or
// 20,000 with detail: full).
Json PerfAnalysisStructured(const JobFiles& job, const Json& arguments);

}  // namespace mt::tools
