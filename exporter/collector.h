// A native collector: reads one source (a procfs file, a sysfs class, a TFEvent file…)
// and appends families to the sink. Collectors run on the scrape thread, one at a time
// (the exporter serialises scrapes), so they may keep state between calls without locks.
#pragma once

#include <string_view>

#include "exporter/metric_sink.h"

namespace mt::exporter {

class Collector {
 public:
  virtual ~Collector() = default;
  virtual std::string_view name() const = 0;
  // Returns false when the source exists but could not be read or parsed; an absent
  // source (no InfiniBand, no GPU) is not a failure: the collector just adds nothing.
  virtual bool Collect(MetricSink& sink) = 0;
};

}  // namespace mt::exporter
