#include "exporter/rdma_collector.h"

#include <string>
#include <thread>
#include <vector>

#include "exporter/text_util.h"

namespace mt::exporter {

namespace {

struct CounterMap {
  const char* file;    // under ports/N/hw_counters/
  const char* metric;  // emitted name
  const char* help;
};

// Ionic hw_counters emitted whenever present.
constexpr CounterMap kIonicCounters[] = {
    {"tx_rdma_retx_bytes", "hw_rdma_tx_retx_bytes_total", "RDMA bytes retransmitted (ionic tx_rdma_retx_bytes)."},
    {"tx_rdma_retx_pkts", "hw_rdma_tx_retx_pkts_total", "RDMA packets retransmitted (ionic tx_rdma_retx_pkts)."},
    {"tx_rdma_ack_timeout", "hw_rdma_tx_ack_timeout_total", "RDMA ACK timeouts (ionic tx_rdma_ack_timeout)."},
    {"rx_rdma_ecn_pkts", "hw_rdma_rx_ecn_pkts_total", "RDMA packets received with ECN marks (ionic rx_rdma_ecn_pkts)."},
    {"rx_rdma_cnp_pkts", "hw_rdma_rx_cnp_pkts_total", "Congestion notification packets received (ionic rx_rdma_cnp_pkts)."},
    {"tx_rdma_cnp_pkts", "hw_rdma_tx_cnp_pkts_total", "Congestion notification packets sent (ionic tx_rdma_cnp_pkts)."},
    {"req_rx_cqe_err", "hw_rdma_req_rx_cqe_err_total", "Requester completion-queue errors (ionic req_rx_cqe_err)."},
    {"req_tx_retry_excd_err", "hw_rdma_req_tx_retry_excd_err_total", "Requests that exhausted their retries (ionic req_tx_retry_excd_err)."},
    {"tx_rdma_ccl_cts_retx_pkts", "hw_rdma_ccl_tx_retx_pkts_total", "Collective-traffic packets retransmitted (ionic tx_rdma_ccl_cts_retx_pkts)."},
    {"tx_rdma_ccl_cts_retx_bytes", "hw_rdma_ccl_tx_retx_bytes_total", "Collective-traffic bytes retransmitted (ionic tx_rdma_ccl_cts_retx_bytes)."},
    {"tx_rdma_ccl_cts_ack_timeout", "hw_rdma_ccl_tx_ack_timeout_total", "Collective-traffic ACK timeouts (ionic tx_rdma_ccl_cts_ack_timeout)."},
    {"tx_rdma_ccl_cts_pkts", "hw_rdma_ccl_tx_pkts_total", "Collective-traffic packets sent (ionic tx_rdma_ccl_cts_pkts)."},
    {"tx_rdma_ccl_cts_bytes", "hw_rdma_ccl_tx_bytes_total", "Collective-traffic bytes sent (ionic tx_rdma_ccl_cts_bytes)."},
    {"rx_rdma_ccl_cts_pkts", "hw_rdma_ccl_rx_pkts_total", "Collective-traffic packets received (ionic rx_rdma_ccl_cts_pkts)."},
    {"rx_rdma_ccl_cts_bytes", "hw_rdma_ccl_rx_bytes_total", "Collective-traffic bytes received (ionic rx_rdma_ccl_cts_bytes)."},
    {"req_rx_dup_response", "hw_rdma_rx_dup_response_total", "Duplicate responses received by the requester (ionic req_rx_dup_response)."},
    {"resp_rx_dup_request", "hw_rdma_rx_dup_request_total", "Duplicate requests received by the responder (ionic resp_rx_dup_request)."},
};

constexpr const char* kRxBytesHelp = "RDMA bytes received on the port.";
constexpr const char* kTxBytesHelp = "RDMA bytes transmitted on the port.";
constexpr const char* kRxPktsHelp = "RDMA packets received on the port.";
constexpr const char* kTxPktsHelp = "RDMA packets transmitted on the port.";

std::optional<double> ReadNumber(const RootFs& fs, const std::string& path) {
  auto text = fs.Read(path);
  if (!text) return std::nullopt;
  if (auto v = ParseU64(*text)) return static_cast<double>(*v);
  return std::nullopt;
}

}  // namespace

bool RdmaCollector::Collect(MetricSink& sink) {
  const std::string base = "/sys/class/infiniband";
  auto devices = fs_.List(base);
  if (devices.empty()) return true;

  struct Port {
    std::string dev, port, dir;
  };
  std::vector<Port> ports;
  for (const auto& dev : devices) {
    for (const auto& port : fs_.List(base + "/" + dev + "/ports")) {
      ports.push_back({dev, port, base + "/" + dev + "/ports/" + port});
    }
  }

  // Warm the ionic firmware counter caches in parallel (one read per hw_counters dir).
  std::vector<std::string> warm;
  for (const auto& p : ports) {
    if (fs_.Exists(p.dir + "/hw_counters/tx_rdma_retx_pkts")) warm.push_back(p.dir + "/hw_counters/tx_rdma_retx_pkts");
  }
  if (warm.size() > 1) {
    std::vector<std::thread> threads;
    threads.reserve(warm.size());
    for (const auto& path : warm) threads.emplace_back([this, &path] { (void)fs_.Read(path); });
    for (auto& t : threads) t.join();
  }

  for (const auto& p : ports) {
    LabelPairs l{{"device", p.dev}, {"port", p.port}};
    if (auto state = fs_.Read(p.dir + "/state")) {
      sink.Gauge("hw_rdma_port_state", "1 if the RDMA port state is ACTIVE, else 0.", l,
                 state->find("ACTIVE") != std::string::npos ? 1.0 : 0.0);
    }
    const std::string counters = p.dir + "/counters";
    const std::string hw = p.dir + "/hw_counters";
    if (fs_.IsDir(counters)) {
      // port_{rcv,xmit}_data count 4-byte words (IBTA PortCounters).
      if (auto v = ReadNumber(fs_, counters + "/port_rcv_data")) sink.Counter("hw_rdma_rx_bytes_total", kRxBytesHelp, l, *v * 4);
      if (auto v = ReadNumber(fs_, counters + "/port_xmit_data")) sink.Counter("hw_rdma_tx_bytes_total", kTxBytesHelp, l, *v * 4);
      if (auto v = ReadNumber(fs_, counters + "/port_rcv_packets")) sink.Counter("hw_rdma_rx_pkts_total", kRxPktsHelp, l, *v);
      if (auto v = ReadNumber(fs_, counters + "/port_xmit_packets")) sink.Counter("hw_rdma_tx_pkts_total", kTxPktsHelp, l, *v);
    } else if (fs_.IsDir(hw)) {
      if (auto v = ReadNumber(fs_, hw + "/rx_rdma_ucast_bytes")) sink.Counter("hw_rdma_rx_bytes_total", kRxBytesHelp, l, *v);
      if (auto v = ReadNumber(fs_, hw + "/tx_rdma_ucast_bytes")) sink.Counter("hw_rdma_tx_bytes_total", kTxBytesHelp, l, *v);
      if (auto v = ReadNumber(fs_, hw + "/rx_rdma_ucast_pkts")) sink.Counter("hw_rdma_rx_pkts_total", kRxPktsHelp, l, *v);
      if (auto v = ReadNumber(fs_, hw + "/tx_rdma_ucast_pkts")) sink.Counter("hw_rdma_tx_pkts_total", kTxPktsHelp, l, *v);
    }
    if (fs_.IsDir(hw)) {
      for (const auto& c : kIonicCounters) {
        if (auto v = ReadNumber(fs_, hw + "/" + c.file)) sink.Counter(c.metric, c.help, l, *v);
      }
    }
  }
  return true;
}

}  // namespace mt::exporter
