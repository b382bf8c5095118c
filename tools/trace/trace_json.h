// A trace analysis as JSON, in the shape (and with the key names) of
// tests/traces/trace_oracle.py's output, so the two can be compared field by field and a
// user can read `mt trace --json` with the oracle's docstring as its definition.
#pragma once
#include "mcp/json.h"
#include "tools/trace/rank_comparison.h"
#include "tools/trace/trace_analysis.h"
#include "tools/trace/trace_diff.h"

namespace mt::tools::trace {

Json AnalysisJson(const TraceAnalysis& a);
Json RankComparisonJson(const RankComparison& r);
Json TraceDiffJson(const TraceDiff& d);

}  // namespace mt::tools::trace
