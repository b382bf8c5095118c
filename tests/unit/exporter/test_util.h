// Helpers for exporter tests: run a collector and index its samples by
// `name{k="v",...}` (labels in emitted order, host last).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>

#include "exporter/collector.h"
#include "exporter/metric_sink.h"

namespace mt::exporter::testing {

inline std::string Fixture(const std::string& name) { return std::string(MT_EXPORTER_FIXTURES) + "/" + name; }

inline double ValueOf(const prometheus::MetricFamily& f, const prometheus::ClientMetric& m) {
  switch (f.type) {
    case prometheus::MetricType::Counter: return m.counter.value;
    case prometheus::MetricType::Gauge: return m.gauge.value;
    default: return m.untyped.value;
  }
}

inline std::string Key(const std::string& name, const prometheus::ClientMetric& m) {
  std::string k = name + "{";
  for (size_t i = 0; i < m.label.size(); ++i) {
    if (i) k += ",";
    k += m.label[i].name + "=\"" + m.label[i].value + "\"";
  }
  return k + "}";
}

struct Scrape {
  std::vector<prometheus::MetricFamily> families;
  std::map<std::string, double> samples;
  std::map<std::string, prometheus::MetricType> types;

  bool Has(const std::string& key) const { return samples.count(key) != 0; }
  double At(const std::string& key) const {
    auto it = samples.find(key);
    return it == samples.end() ? -12345.678 : it->second;
  }
  bool HasFamily(const std::string& name) const { return types.count(name) != 0; }
};

inline Scrape Index(std::vector<prometheus::MetricFamily> families) {
  Scrape s;
  for (const auto& f : families) {
    s.types[f.name] = f.type;
    for (const auto& m : f.metric) s.samples[Key(f.name, m)] = ValueOf(f, m);
  }
  s.families = std::move(families);
  return s;
}

inline Scrape CollectOnce(Collector& c, const std::string& host = "node1", bool* ok = nullptr) {
  MetricSink sink(host);
  bool r = c.Collect(sink);
  if (ok) *ok = r;
  return Index(sink.Take());
}

}  // namespace mt::exporter::testing
