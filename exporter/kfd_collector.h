// Processes holding an AMD GPU: numeric entries of /sys/class/kfd/kfd/proc.
#pragma once

#include "exporter/collector.h"
#include "exporter/root_fs.h"

namespace mt::exporter {

class KfdCollector : public Collector {
 public:
  explicit KfdCollector(const RootFs& fs) : fs_(fs) {}
  std::string_view name() const override { return "kfd"; }
  bool Collect(MetricSink& sink) override;

 private:
  const RootFs& fs_;
};

}  // namespace mt::exporter
