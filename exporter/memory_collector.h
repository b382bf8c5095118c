// /proc/meminfo (dirty and writeback page cache) and /proc/vmstat (OOM kills).
#pragma once

#include "exporter/collector.h"
#include "exporter/root_fs.h"

namespace mt::exporter {

class MemoryCollector : public Collector {
 public:
  explicit MemoryCollector(const RootFs& fs) : fs_(fs) {}
  std::string_view name() const override { return "memory"; }
  bool Collect(MetricSink& sink) override;

 private:
  const RootFs& fs_;
};

}  // namespace mt::exporter
