#include "exporter/netdev_collector.h"

#include "exporter/text_util.h"

namespace mt::exporter {

namespace {
bool Skipped(std::string_view dev) {
  return dev == "lo" || dev == "docker0" || dev.substr(0, 4) == "veth";
}
}  // namespace

bool NetDevCollector::Collect(MetricSink& sink) {
  auto text = fs_.Read("/proc/net/dev");
  if (!text) return !fs_.Exists("/proc/net/dev");
  bool ok = true;
  ForEachLine(*text, [&](std::string_view line) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;  // the two header lines
    std::string_view dev = Trim(line.substr(0, colon));
    if (dev.empty() || Skipped(dev)) return;
    auto f = Fields(line.substr(colon + 1));
    // rx: bytes packets errs drop fifo frame compressed multicast; tx: bytes packets errs drop ...
    if (f.size() < 12) {
      ok = false;
      return;
    }
    auto num = [&](size_t i) { return static_cast<double>(ParseU64(f[i]).value_or(0)); };
    LabelPairs l{{"device", dev}};
    sink.Counter("hw_net_rx_bytes_total", "Bytes received (/proc/net/dev).", l, num(0));
    sink.Counter("hw_net_rx_errors_total", "Receive errors (/proc/net/dev).", l, num(2));
    sink.Counter("hw_net_rx_drop_total", "Received packets dropped (/proc/net/dev).", l, num(3));
    sink.Counter("hw_net_tx_bytes_total", "Bytes transmitted (/proc/net/dev).", l, num(8));
    sink.Counter("hw_net_tx_errors_total", "Transmit errors (/proc/net/dev).", l, num(10));
    sink.Counter("hw_net_tx_drop_total", "Transmitted packets dropped (/proc/net/dev).", l, num(11));
  });
  return ok;
}

}  // namespace mt::exporter
