// The perf report's profiler-trace section (from perf_analysis's `trace` answer): a stacked
// step-time bar per rank (compute, exposed communication, un-overlapped copies, idle; inline
// SVG), the kernel table, the collective table, the straggler verdict and what to look at
// next. Empty when the answer has no trace.
#pragma once
#include <string>

#include "mcp/json.h"

namespace mt::tools {

std::string TraceHtmlSection(const Json& trace);

}  // namespace mt::tools
