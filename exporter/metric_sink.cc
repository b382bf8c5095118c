#include "exporter/metric_sink.h"

namespace mt::exporter {

prometheus::MetricFamily& MetricSink::Family(std::string_view name, std::string_view help,
                                             prometheus::MetricType type) {
  auto it = index_.find(std::string(name));
  if (it != index_.end()) return families_[it->second];
  index_.emplace(std::string(name), families_.size());
  prometheus::MetricFamily& f = families_.emplace_back();
  f.name = std::string(name);
  f.help = std::string(help);
  f.type = type;
  return f;
}

const prometheus::MetricFamily* MetricSink::Find(std::string_view name) const {
  auto it = index_.find(std::string(name));
  return it == index_.end() ? nullptr : &families_[it->second];
}

prometheus::ClientMetric& MetricSink::Add(std::string_view name, std::string_view help,
                                          prometheus::MetricType type,
                                          const LabelPairs& labels, int64_t timestamp_ms) {
  prometheus::MetricFamily& f = Family(name, help, type);
  prometheus::ClientMetric& m = f.metric.emplace_back();
  m.label.reserve(labels.size() + 1);
  for (const auto& [k, v] : labels) m.label.push_back({std::string(k), std::string(v)});
  m.label.push_back({"host", host_});
  m.timestamp_ms = timestamp_ms;
  return m;
}

void MetricSink::Gauge(std::string_view name, std::string_view help, const LabelPairs& labels,
                       double value, int64_t timestamp_ms) {
  Add(name, help, prometheus::MetricType::Gauge, labels, timestamp_ms).gauge.value = value;
}

void MetricSink::Counter(std::string_view name, std::string_view help,
                         const LabelPairs& labels, double value, int64_t timestamp_ms) {
  Add(name, help, prometheus::MetricType::Counter, labels, timestamp_ms).counter.value = value;
}

std::vector<prometheus::MetricFamily> MetricSink::Take() {
  std::vector<prometheus::MetricFamily> out;
  out.reserve(families_.size());
  for (auto& f : families_) {
    if (!f.metric.empty()) out.push_back(std::move(f));
  }
  families_.clear();
  index_.clear();
  return out;
}

}  // namespace mt::exporter
