#include "exporter/tcp_collector.h"

#include <vector>

#include "exporter/text_util.h"

namespace mt::exporter {

std::optional<double> SnmpValue(std::string_view text, std::string_view proto,
                                std::string_view name) {
  std::vector<std::string_view> header;
  std::optional<double> out;
  ForEachLine(text, [&](std::string_view line) {
    if (out) return;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || line.substr(0, colon) != proto) return;
    auto f = Fields(line.substr(colon + 1));
    if (header.empty()) {
      header = std::move(f);
      return;
    }
    for (size_t i = 0; i < header.size() && i < f.size(); ++i) {
      if (header[i] == name) {
        if (auto v = ParseDouble(f[i])) out = *v;
        break;
      }
    }
    header.clear();
  });
  return out;
}

bool TcpCollector::Collect(MetricSink& sink) {
  auto snmp = fs_.Read("/proc/net/snmp");
  auto netstat = fs_.Read("/proc/net/netstat");
  if (snmp) {
    if (auto v = SnmpValue(*snmp, "Tcp", "RetransSegs"))
      sink.Counter("hw_tcp_retransmits_total", "TCP segments retransmitted (/proc/net/snmp RetransSegs).", {}, *v);
  }
  if (netstat) {
    if (auto v = SnmpValue(*netstat, "TcpExt", "ListenOverflows"))
      sink.Counter("hw_tcp_listen_overflows_total", "Accept queue overflows (TcpExt ListenOverflows).", {}, *v);
    if (auto v = SnmpValue(*netstat, "TcpExt", "ListenDrops"))
      sink.Counter("hw_tcp_listen_drops_total", "SYNs dropped on listening sockets (TcpExt ListenDrops).", {}, *v);
  }
  // EstabResets is a Tcp MIB counter on Linux (/proc/net/snmp); the original read it from
  // the netstat file, where it is absent. Take TcpExt first for compatibility, then Tcp.
  std::optional<double> resets;
  if (netstat) resets = SnmpValue(*netstat, "TcpExt", "EstabResets");
  if (!resets && snmp) resets = SnmpValue(*snmp, "Tcp", "EstabResets");
  if (resets)
    sink.Counter("hw_tcp_estab_resets_total", "Established connections reset (Tcp EstabResets).", {}, *resets);
  if (netstat) {
    if (auto v = SnmpValue(*netstat, "TcpExt", "TCPAbortOnTimeout"))
      sink.Counter("hw_tcp_abort_on_timeout_total", "Connections aborted after retransmission timeouts (TcpExt TCPAbortOnTimeout).", {}, *v);
  }
  return snmp.has_value() || netstat.has_value() ||
         (!fs_.Exists("/proc/net/snmp") && !fs_.Exists("/proc/net/netstat"));
}

}  // namespace mt::exporter
