// compare_jobs' trace section: when both jobs have a profiler trace (perf_analysis's choice:
// the newest xplane's node 0, else the Chrome traces), rank 0's steady step decomposition
// side by side and the ops whose time per step changed most (tools/trace/trace_diff.h).
#pragma once
#include <string>
#include <vector>

#include "tools/compare/compare_answer.h"
#include "tools/logs/workspace.h"

namespace mt::tools {

// Null when either job has no trace; `notes` gains why when a trace exists but cannot be read.
Nullable<CompareTraceView> CompareJobTraces(const JobFiles& a, const JobFiles& b, std::vector<std::string>* notes);

}  // namespace mt::tools
