// /proc/net/dev: per-interface byte, error and drop counters. Loopback, docker0 and
// veth* are skipped, as the original host plugin did.
#pragma once

#include "exporter/collector.h"
#include "exporter/root_fs.h"

namespace mt::exporter {

class NetDevCollector : public Collector {
 public:
  explicit NetDevCollector(const RootFs& fs) : fs_(fs) {}
  std::string_view name() const override { return "netdev"; }
  bool Collect(MetricSink& sink) override;

 private:
  const RootFs& fs_;
};

}  // namespace mt::exporter
