// TCP health from /proc/net/snmp (Tcp:) and /proc/net/netstat (TcpExt:).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "exporter/collector.h"
#include "exporter/root_fs.h"

namespace mt::exporter {

// Both files hold pairs of lines "Proto: Name1 Name2 ..." / "Proto: v1 v2 ...".
// Returns the value of `name` in the first pair for `proto` (e.g. "Tcp", "TcpExt").
std::optional<double> SnmpValue(std::string_view text, std::string_view proto,
                                std::string_view name);

class TcpCollector : public Collector {
 public:
  explicit TcpCollector(const RootFs& fs) : fs_(fs) {}
  std::string_view name() const override { return "tcp"; }
  bool Collect(MetricSink& sink) override;

 private:
  const RootFs& fs_;
};

}  // namespace mt::exporter
