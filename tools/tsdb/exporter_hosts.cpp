#include "tools/tsdb/exporter_hosts.h"

#include <algorithm>

namespace mt::tools {

std::vector<ExporterInStore> FindExportersInStore(const PrometheusClient& client, const std::vector<std::string>& names,
                                                  double start, double end) {
  std::vector<ExporterInStore> out;
  for (auto& d : DetectExporters(names)) {
    ExporterInStore e;
    std::vector<std::string> used;   // labels the hosts came from, in the spec's order of preference
    for (const auto& s : client.Series({d.detected_by.front()}, start, end)) {
      // The best label the series carries: a host label the exporter writes, else instance.
      for (const auto& label : d.host_labels) {
        if (!s.contains(label) || !s[label].is_string() || s[label].get<std::string>().empty()) continue;
        const std::string v = s[label].get<std::string>();
        e.hosts.push_back(label == "instance" ? HostOfInstance(v) : v);
        if (std::find(used.begin(), used.end(), label) == used.end()) used.push_back(label);
        break;
      }
    }
    for (const auto& l : used) e.host_label += (e.host_label.empty() ? "" : "/") + l;
    std::sort(e.hosts.begin(), e.hosts.end());
    e.hosts.erase(std::unique(e.hosts.begin(), e.hosts.end()), e.hosts.end());
    e.exporter = std::move(d);
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace mt::tools
