// /proc/stat: runnable and blocked tasks, context switches.
#pragma once

#include "exporter/collector.h"
#include "exporter/root_fs.h"

namespace mt::exporter {

class ProcStatCollector : public Collector {
 public:
  explicit ProcStatCollector(const RootFs& fs) : fs_(fs) {}
  std::string_view name() const override { return "stat"; }
  bool Collect(MetricSink& sink) override;

 private:
  const RootFs& fs_;
};

}  // namespace mt::exporter
