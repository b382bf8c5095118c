// The exporters that feed a store (exporter_catalog.h), with the hosts each one reports and
// the label the host names were read from: on a central store there is no `host` label of
// ours, only the exporters' own (dcgm-exporter's Hostname, AMD's hostname, `instance`).
#pragma once
#include <string>
#include <vector>

#include "tools/tsdb/exporter_catalog.h"
#include "tools/tsdb/prometheus_client.h"

namespace mt::tools {

struct ExporterInStore {
  DetectedExporter exporter;
  std::string host_label;            // the label the hosts came from ("" when none was found)
  std::vector<std::string> hosts;    // sorted, unique; instance values without their port
};

// Detects the exporters from the store's metric names (label values of __name__), then reads
// the host of every series of one detect metric per exporter in [start, end]: one query per
// exporter.
std::vector<ExporterInStore> FindExportersInStore(const PrometheusClient& client, const std::vector<std::string>& names,
                                                  double start, double end);

}  // namespace mt::tools
