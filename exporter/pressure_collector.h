// /proc/pressure/io (PSI). Absent on kernels without CONFIG_PSI or with psi=0: then
// the families are absent.
#pragma once

#include "exporter/collector.h"
#include "exporter/root_fs.h"

namespace mt::exporter {

class PressureCollector : public Collector {
 public:
  explicit PressureCollector(const RootFs& fs) : fs_(fs) {}
  std::string_view name() const override { return "pressure"; }
  bool Collect(MetricSink& sink) override;

 private:
  const RootFs& fs_;
};

}  // namespace mt::exporter
