// What /metrics serves: the native collectors, run on each scrape (fresh values, no
// background CPU when nobody scrapes), then the plugins' latest output, then the
// exporter's own health metrics. Scrapes are serialised; plugins never block a scrape.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/collectable.h>

#include "exporter/collector.h"
#include "exporter/plugin_runner.h"

namespace mt::exporter {

class ExporterCollectable : public prometheus::Collectable {
 public:
  ExporterCollectable(std::string host, std::vector<std::unique_ptr<Collector>> collectors,
                      const PluginRunner* plugins);

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::string host_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Collector>> collectors_;
  const PluginRunner* plugins_;  // may be null
};

// Appends plugin families to `families`. A plugin family whose name is already present
// is merged when the types agree; samples of a series that already exists, or of a
// family whose type disagrees, are dropped. Returns the number of dropped samples.
size_t MergeFamilies(std::vector<prometheus::MetricFamily>& families,
                     std::vector<prometheus::MetricFamily> extra);

}  // namespace mt::exporter
