// Where collectors put their samples during one scrape. Families are created on first
// use and keep their order; the `host` label is appended to every sample, as the
// original plugins did (`gpu="0",host="node1"`).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <prometheus/metric_family.h>

namespace mt::exporter {

using LabelPairs = std::vector<std::pair<std::string_view, std::string_view>>;

class MetricSink {
 public:
  explicit MetricSink(std::string host) : host_(std::move(host)) {}

  void Gauge(std::string_view name, std::string_view help, const LabelPairs& labels,
             double value, int64_t timestamp_ms = 0);
  void Counter(std::string_view name, std::string_view help, const LabelPairs& labels,
               double value, int64_t timestamp_ms = 0);

  // The family with this name, created (empty, with help and type) if new. A family
  // that already exists keeps its first help/type.
  prometheus::MetricFamily& Family(std::string_view name, std::string_view help,
                                   prometheus::MetricType type);
  const prometheus::MetricFamily* Find(std::string_view name) const;

  const std::string& host() const { return host_; }
  size_t family_count() const { return families_.size(); }

  // Families with at least one sample, in creation order.
  std::vector<prometheus::MetricFamily> Take();

 private:
  prometheus::ClientMetric& Add(std::string_view name, std::string_view help,
                                prometheus::MetricType type, const LabelPairs& labels,
                                int64_t timestamp_ms);

  std::string host_;
  std::vector<prometheus::MetricFamily> families_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace mt::exporter
