// RDMA NICs under /sys/class/infiniband: the standard port counters (any HCA) and the
// AMD Pensando "ionic" hw_counters (retransmits, ACK timeouts, ECN/CNP, collective
// traffic). Ionic reads are slow the first time (~60 ms per NIC while the firmware fills
// its counter cache), so one read per NIC is issued in parallel before the serial pass.
#pragma once

#include "exporter/collector.h"
#include "exporter/root_fs.h"

namespace mt::exporter {

class RdmaCollector : public Collector {
 public:
  explicit RdmaCollector(const RootFs& fs) : fs_(fs) {}
  std::string_view name() const override { return "rdma"; }
  bool Collect(MetricSink& sink) override;

 private:
  const RootFs& fs_;
};

}  // namespace mt::exporter
