// Per-host network evidence over a window (reference §4.2 playbook 6): TCP retransmit
// rate, RDMA retransmits, ACK timeouts, CNPs, retry-exhausted and CQE errors, port state.
// Counters go through rate()/increase() within the window only (they count since boot).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "tools/tsdb/tsdb_context.h"

namespace mt::tools {

struct HostNetwork {
  double tcp_retx_max = 0, tcp_retx_mean = 0;     // segments/s
  double rdma_retx_max = 0, rdma_retx_mean = 0;   // packets/s, summed over the host's NICs
  double rdma_retx_total = 0;                     // packets in the window
  double ack_timeout_total = 0, cnp_total = 0, retry_exceeded_total = 0, cqe_err_total = 0;
  double net_errors_total = 0;
  double port_state_min = 1;                      // 0: a port was down at some point
  double active_from = 0, active_to = 0;          // when RDMA retx were above 1/s (0: never)
  int active_points = 0;
  // Exclusion priority: 1 retry-exhausted, 2 sustained RDMA retx + ACK timeouts,
  // 3 CNP (congestion), 4 TCP retransmits only (not a TGS cause), 0 clean.
  int severity_class = 0;
};

// Every host of the TSDB (hosts with no network series are absent).
std::map<std::string, HostNetwork> NetworkByHost(TsdbContext& tsdb, TsdbWindow w, const std::string& host_matcher = "");

// Hosts flagged (class 1–3), most severe first: class, then RDMA retransmits.
std::vector<std::string> RankNetworkHosts(const std::map<std::string, HostNetwork>& net);

// Network is clean for TGS purposes: no host in classes 1–3 and TCP retx ≤ 10/s everywhere.
bool NetworkClean(const std::map<std::string, HostNetwork>& net);

}  // namespace mt::tools
