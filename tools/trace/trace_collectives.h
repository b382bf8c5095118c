// Collectives of one trace by kind, with the bytes each moved and the achieved algorithm
// and bus bandwidth (nccl-tests' definitions): sizes from the NCCL kernel's own args, else
// from the innermost enclosing nccl:/gloo:/record_param_comms record on the launching
// thread. CPU-only traces count a kind from the backend's own spans (gloo:…) when it has
// any, since the enqueue ops around them would double-count.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tools/trace/event_classes.h"
#include "tools/trace/trace_analysis.h"

namespace mt::tools::trace {

struct CollectiveSource {
  const TraceEvent* event;       // the NCCL kernel (GPU) or the CPU collective op
  std::string kind;
  const TraceEvent* launch;      // its launch (GPU; may be null) or the op itself (CPU)
};

std::vector<CollectiveFigures> CollectiveFiguresOf(const TraceFile& trace, const EventClasses& classes,
                                                   const std::vector<CollectiveSource>& sources, bool gpu_mode,
                                                   std::optional<int64_t> world_size);

}  // namespace mt::tools::trace
