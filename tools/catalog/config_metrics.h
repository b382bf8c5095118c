// mt.yaml's `metrics:` section: the Prometheus-compatible endpoints a cluster already runs
// (tools/tsdb/metrics_source.h), by name.
#pragma once
#include <filesystem>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "tools/tsdb/metrics_source.h"

namespace mt::tools {

// Parses `metrics.sources`; relative file paths are relative to `base`. Throws
// std::runtime_error naming the source and the setting.
std::vector<MetricsSource> MetricsSourcesFromYaml(const YAML::Node& metrics, const std::filesystem::path& base);

}  // namespace mt::tools
