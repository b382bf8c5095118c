// Writes a job's time series as OpenMetrics text for `promtool tsdb create-blocks-from
// openmetrics`, split into files per 2-hour window aligned like Prometheus blocks.
//
// Why split: promtool re-reads its whole input once per 2 h block it cuts, so one file for
// a 35 h job costs ~18 passes; one file per window costs one. Each file stands alone:
// `# TYPE` before each family's samples, families contiguous, every series in ascending
// time order, timestamps in seconds, and `# EOF` last (reference/components.md §2).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "launcher/sim/metrics_model.h"

namespace mt::launch::sim {

struct OpenMetricsStats {
  size_t files = 0;
  size_t series = 0;
  size_t samples = 0;
  size_t bytes = 0;
};

// Writes <dir>/window-<start>.om files in time order, calling on_file(path) after each one
// (e.g. to start promtool on it while the next is written). kIo when a file cannot be
// written; an error returned by on_file stops the writer and is returned.
base::Status WriteOpenMetricsWindows(const MetricsModel& model, const std::filesystem::path& dir,
                                     const std::function<base::Status(const std::filesystem::path&)>& on_file,
                                     OpenMetricsStats* stats);

// Formats a sample value the way Prometheus prints it back: integers without a fraction,
// other values in the shortest round-trip form.
void AppendValue(std::string& out, double v);

}  // namespace mt::launch::sim
