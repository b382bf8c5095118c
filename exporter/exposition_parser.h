// Parser and validator for Prometheus text exposition (format 0.0.4), as printed by
// *_metrics_plugin.sh scripts. Every line is checked; an invalid line is dropped with a
// reason, so one bad plugin line never breaks the whole scrape.
//
// Supported: # HELP, # TYPE (counter, gauge, untyped), other comments (ignored), samples
// `name{label="value",...} value [timestamp_ms]`. Families declared summary or
// histogram are rejected (their samples cannot be rebuilt faithfully from loose lines;
// the plugin contract only produces counters and gauges).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/metric_family.h>

namespace mt::exporter {

struct ExpositionSample {
  std::string name;
  std::vector<prometheus::ClientMetric::Label> labels;  // in the order written
  double value = 0;
  int64_t timestamp_ms = 0;
  bool has_timestamp = false;
};

enum class LineKind { kBlank, kComment, kHelp, kType, kSample };

struct ExpositionLine {
  LineKind kind = LineKind::kBlank;
  std::string name;       // HELP/TYPE: the family; sample: the metric name
  std::string text;       // HELP: unescaped help; TYPE: the type word
  ExpositionSample sample;
};

// Parses one line (without '\n'). Returns false and sets *error on invalid input.
bool ParseExpositionLine(std::string_view line, ExpositionLine* out, std::string* error);

bool IsValidMetricName(std::string_view name);
bool IsValidLabelName(std::string_view name);

struct ExpositionError {
  size_t line_number;  // 1-based
  std::string reason;
};

struct ParsedExposition {
  std::vector<prometheus::MetricFamily> families;
  std::vector<ExpositionError> errors;  // the first kMaxErrorDetails dropped lines
  size_t error_count = 0;               // every invalid (dropped) line
  size_t series_dropped = 0;            // valid samples left out because of max_series
};

inline constexpr size_t kMaxErrorDetails = 100;

// Parses a whole text; families are merged by name (a sample without a TYPE line makes
// an untyped family), duplicate series are dropped as errors. At most `max_series`
// samples are kept (and at most that many families are created): further valid samples
// are counted in series_dropped, so memory stays proportional to the cap.
ParsedExposition ParseExposition(std::string_view text, size_t max_series = SIZE_MAX);

}  // namespace mt::exporter
