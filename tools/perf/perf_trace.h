// perf_analysis's `trace` section: the job's profiler trace read and decomposed
// (tools/trace). Which trace: the newest profile run's first xplane file (node 0's host:
// its GPUs are compared as ranks), else the job's Chrome traces (up to 16, one per rank).
// Traces over 4 GiB in all are not read in an MCP call (a note says to run `mt trace`).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "tools/perf/perf_answer.h"
#include "tools/perf/perf_artifacts.h"
#include "tools/trace/trace_analysis.h"

namespace mt::tools {

struct PerfTrace {
  Nullable<TraceSection> section;
  std::vector<trace::TraceAnalysis> analyses;   // for the HTML report
};

// `notes` gains why there is no section when a trace exists but cannot be read.
PerfTrace ReadPerfTrace(const std::filesystem::path& job_dir, const PerfArtifacts& artifacts,
                        std::vector<std::string>* notes);

}  // namespace mt::tools
