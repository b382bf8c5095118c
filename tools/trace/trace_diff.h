// What got slower between two traces of the same program (a base and a test run, or two
// ranks): the steady step decomposition side by side, and the kernels (CPU ops for CPU-only
// traces) whose time per profiled step changed most.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tools/trace/trace_analysis.h"

namespace mt::tools::trace {

struct CategoryDelta {
  std::string category;                  // step_time | compute | comm | exposed_comm | memcpy_memset_exposed | idle
  std::optional<double> base_us, test_us, delta_us;
  std::optional<double> base_share, test_share;   // of the step (absent for step_time)
};

struct OpDelta {
  std::string name;
  double base_us = 0, test_us = 0, delta_us = 0;  // total per profiled step
  int64_t base_count = 0, test_count = 0;
};

struct TraceDiff {
  std::vector<CategoryDelta> categories;
  std::vector<OpDelta> ops;              // the 10 largest |delta| first
  std::string summary;                   // one sentence: the step time change and its largest part
};

TraceDiff DiffTraces(const TraceAnalysis& base, const TraceAnalysis& test);

}  // namespace mt::tools::trace
