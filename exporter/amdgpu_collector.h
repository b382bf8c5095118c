// AMD GPUs from sysfs only (no subprocess): hwmon sensors, VRAM, RAS (ACA) error
// counters and PCIe AER counters. GPUs are the /sys/class/hwmon entries named "amdgpu",
// numbered 0..N-1 in PCI-address order.
#pragma once

#include <string>
#include <vector>

#include "exporter/collector.h"
#include "exporter/root_fs.h"

namespace mt::exporter {

struct AmdGpu {
  std::string hwmon;   // e.g. /sys/class/hwmon/hwmon3
  std::string pci;     // e.g. 0000:03:00.0
};

// Discovers amdgpu hwmon entries sorted by PCI address.
std::vector<AmdGpu> DiscoverAmdGpus(const RootFs& fs);

class AmdGpuCollector : public Collector {
 public:
  explicit AmdGpuCollector(const RootFs& fs) : fs_(fs) {}
  std::string_view name() const override { return "amdgpu"; }
  bool Collect(MetricSink& sink) override;

 private:
  const RootFs& fs_;
};

}  // namespace mt::exporter
