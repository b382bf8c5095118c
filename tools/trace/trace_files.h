// Finding profiler traces: a file given by name is taken as it is; a directory is walked
// (depth ≤ 8, symbolic links not followed, so nothing outside it is read) for PyTorch /
// Kineto trace names: `*.pt.trace.json[.gz]`, or `*trace*.json[.gz]` / `rank*.json[.gz]`,
// and JAX/XLA profiles `*.xplane.pb`.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"
#include "tools/trace/trace_analysis.h"

namespace mt::tools::trace {

bool LooksLikeTraceName(const std::string& file_name);

// Sorted paths; at most `max_files` (more is kTooMany, naming the directory).
base::Result<std::vector<std::filesystem::path>> FindTraceFiles(const std::filesystem::path& path,
                                                                size_t max_files = 256);

// Reads and analyses one trace file: a Chrome trace gives one analysis; an XSpace one per
// device plane, each named "<file>:/device:GPU:<N>" with the device ordinal as its rank.
base::Result<std::vector<TraceAnalysis>> AnalyseTraceFile(const std::filesystem::path& file);

}  // namespace mt::tools::trace
