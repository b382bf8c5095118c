#include "tools/tsdb/tsdb_network.h"

#include <algorithm>

namespace mt::tools {

std::map<std::string, HostNetwork> NetworkByHost(TsdbContext& tsdb, TsdbWindow w, const std::string& m) {
  std::map<std::string, HostNetwork> out;
  const std::string sel = m.empty() ? "" : "{" + m + "}";
  const std::string d = PromDuration(w.seconds());
  tsdb.Progress("network: TCP and RDMA retransmits");
  for (auto& [h, st] : tsdb.PerHostRange("sum by (host) (rate(hw_tcp_retransmits_total" + sel + "[5m]))", w)) {
    out[h].tcp_retx_max = st.max;
    out[h].tcp_retx_mean = st.mean;
  }
  for (const auto& s : tsdb.Range("sum by (host) (rate(hw_rdma_tx_retx_pkts_total" + sel + "[5m]))", w)) {
    if (s.points.empty()) continue;
    auto& n = out[s.label("host")];
    SeriesStats st = Stats(s);
    n.rdma_retx_max = st.max;
    n.rdma_retx_mean = st.mean;
  }
  // When: irate (the last two samples) so that the interval does not trail the end of the
  // retransmits by the 5 min of rate()'s window.
  for (const auto& s : tsdb.Range("sum by (host) (irate(hw_rdma_tx_retx_pkts_total" + sel + "[5m]))", w)) {
    if (s.points.empty()) continue;
    auto& n = out[s.label("host")];
    for (const auto& p : s.points)
      if (p.v > 1.0) {
        if (n.active_points++ == 0) n.active_from = p.t;
        n.active_to = p.t;
      }
  }
  auto total = [&](const std::string& metric, double HostNetwork::*field) {
    for (auto& [h, v] : tsdb.PerHost("sum by (host) (increase(" + metric + sel + "[" + d + "]))", w.end)) out[h].*field = v;
  };
  total("hw_rdma_tx_retx_pkts_total", &HostNetwork::rdma_retx_total);
  total("hw_rdma_tx_ack_timeout_total", &HostNetwork::ack_timeout_total);
  total("hw_rdma_rx_cnp_pkts_total", &HostNetwork::cnp_total);
  total("hw_rdma_req_tx_retry_excd_err_total", &HostNetwork::retry_exceeded_total);
  total("hw_rdma_req_rx_cqe_err_total", &HostNetwork::cqe_err_total);
  for (auto& [h, v] :
       tsdb.PerHost("sum by (host) (increase(hw_net_rx_errors_total" + sel + "[" + d + "]) + increase(hw_net_tx_errors_total" +
                        sel + "[" + d + "]))",
                    w.end))
    out[h].net_errors_total = v;
  for (auto& [h, v] : tsdb.PerHost("min by (host) (min_over_time(hw_rdma_port_state" + sel + "[" + d + "]))", w.end))
    out[h].port_state_min = v;
  std::vector<double> cnps;
  for (auto& [h, n] : out) cnps.push_back(n.cnp_total);
  const double cnp_median = Median(cnps);
  for (auto& [h, n] : out) {
    (void)h;
    // Sustained: at least 3 evaluation points above 1 packet/s.
    bool rdma = n.active_points >= 3;
    if (n.retry_exceeded_total >= 1) n.severity_class = 1;
    else if (rdma && n.ack_timeout_total >= 1) n.severity_class = 2;
    else if (rdma) n.severity_class = 2;
    // Congestion: CNPs well above what every host sees (DCQCN sends a background trickle).
    else if (n.cnp_total / std::max(1.0, w.seconds()) > 10 && n.cnp_total > 3 * cnp_median) n.severity_class = 3;
    else if (n.tcp_retx_max > 10) n.severity_class = 4;
    if (n.port_state_min < 1 && n.severity_class == 0) n.severity_class = 1;
  }
  return out;
}

std::vector<std::string> RankNetworkHosts(const std::map<std::string, HostNetwork>& net) {
  std::vector<std::string> hosts;
  for (const auto& [h, n] : net)
    if (n.severity_class >= 1 && n.severity_class <= 3) hosts.push_back(h);
  std::sort(hosts.begin(), hosts.end(), [&](const std::string& a, const std::string& b) {
    const auto& x = net.at(a);
    const auto& y = net.at(b);
    if (x.severity_class != y.severity_class) return x.severity_class < y.severity_class;
    if (x.rdma_retx_total != y.rdma_retx_total) return x.rdma_retx_total > y.rdma_retx_total;
    return a < b;
  });
  return hosts;
}

bool NetworkClean(const std::map<std::string, HostNetwork>& net) {
  for (const auto& [h, n] : net) {
    (void)h;
    if (n.severity_class != 0) return false;
  }
  return true;
}

}  // namespace mt::tools
