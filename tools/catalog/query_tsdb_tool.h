// query_tsdb: a job's Prometheus TSDB turned into evidence (discover, promql, playbook,
// correlate), live or after the job ended. Input and answer are types (the answer:
// tools/tsdb/query_answer.h); the CLI (`mt query`) calls QueryTsdbStructured directly.
#pragma once
#include <optional>
#include <string>

#include "mcp/typed.h"
#include <filesystem>

#include "mcp/registry.h"
#include "tools/tsdb/metrics_source.h"
#include "tools/tsdb/query_answer.h"
#include "tools/catalog/product_tools.h"
#include "tools/tsdb/tsdb_manager.h"
#include "tools/logs/workspace.h"

namespace mt::mcp {
class CallContext;
}

namespace mt::tools {

// A time argument: ISO-8601 or Unix seconds (a string of digits or a number).
inline mcp::Spec TimeArgument(std::string_view what) {
  return mcp::Spec{.description = what, .schema = Json{{"type", {"string", "number"}}}};
}

struct QueryTsdbInput {
  std::string job;
  std::string mode;
  std::optional<std::string> query;
  std::optional<Json> start, end, time;
  std::optional<double> step;
  int64_t points = 20;
  std::optional<std::string> playbook;
  std::optional<int64_t> training_step;
  std::optional<std::string> now;
  std::string detail = "summary";
  std::optional<std::string> source;

  template <class F>
  static void Fields(F& f) {
    f("job", &QueryTsdbInput::job, {.description = "job id, directory or log name", .min_length = 1, .max_length = 1024});
    f("mode", &QueryTsdbInput::mode, {.one_of = {"discover", "promql", "playbook", "correlate"}});
    f("query", &QueryTsdbInput::query, {.description = "PromQL (mode promql)", .min_length = 1, .max_length = 8192});
    f("start", &QueryTsdbInput::start, TimeArgument("range start (promql; playbook window): ISO-8601 (2026-02-24T19:06:00Z) or Unix seconds"));
    f("end", &QueryTsdbInput::end, TimeArgument("range end (promql; playbook window): ISO-8601 (2026-02-24T19:06:00Z) or Unix seconds"));
    f("time", &QueryTsdbInput::time,
      TimeArgument("instant-query time (promql) or the moment to correlate: ISO-8601 (2026-02-24T19:06:00Z) or Unix seconds"));
    f("step", &QueryTsdbInput::step,
      {.description = "range step in seconds (raised if a series would exceed 11,000 points)", .maximum = 86400,
       .schema = Json{{"exclusiveMinimum", 0}}});
    f("points", &QueryTsdbInput::points,
      {.description = "raw points returned at most (promql)", .minimum = 0, .maximum = 500, .default_value = 20});
    f("playbook", &QueryTsdbInput::playbook,
      {.one_of = {"auto", "hang", "heartbeat", "host_oom", "node_failure", "gpu_health", "network_health", "training_stability"}});
    f("training_step", &QueryTsdbInput::training_step,
      {.description = "correlate at this training step (mapped to time through tb_step)", .minimum = 0});
    f("now", &QueryTsdbInput::now,
      {.description = "ISO-8601 'now' for the triage that sets default windows (default: the end of the TSDB's data)",
       .max_length = 40});
    f("source", &QueryTsdbInput::source,
      {.description = "a metrics source configured in mt.yaml (metrics.sources: a central Prometheus, Thanos, Mimir, "
                      "VictoriaMetrics) instead of the job's own TSDB; modes discover, promql and playbook auto (attribution "
                      "through the exporters' own metric names)",
       .min_length = 1, .max_length = 128});
    f("detail", &QueryTsdbInput::detail,
      {.description = "full: up to 20,000 tokens instead of 2,000", .one_of = {"summary", "full"}, .default_value = "summary"});
  }
};

// `sources`: the configured metrics sources `source` may name (mt.yaml metrics.sources).
mcp::Tool QueryTsdbTool(const std::filesystem::path& workspace, TsdbManager& manager,
                        std::vector<MetricsSource> sources = {});
// Registers query_tsdb on the process-wide DefaultTsdbManager().
void RegisterQueryTsdb(mcp::Registry& registry, const ProductOptions& options);

// Arguments already validated against the input schema; job resolved. Throws
// std::invalid_argument (bad or missing arguments), TsdbError (TSDB missing, empty,
// corrupt; Prometheus cannot start), PrometheusError (Prometheus's own message, e.g.
// bad_data for invalid PromQL). `call` may be null (CLI). `stats`, when given, receives
// {queries, raw_bytes (the Prometheus JSON the answer replaced), prometheus_started}.
QueryAnswer QueryTsdbAnswer(const JobFiles& job, const QueryTsdbInput& input, TsdbManager& manager,
                            const std::vector<MetricsSource>& sources, mcp::CallContext* call, Json* stats = nullptr);
// Bounds the encoded answer to the input's budget (2,000 tokens, 20,000 with detail: full)
// and returns the text block.
std::string BoundQueryAnswer(const QueryTsdbInput& input, Json& encoded);
// QueryTsdbAnswer encoded and bounded: the tool's structuredContent, for `mt query`.
Json QueryTsdbStructured(const JobFiles& job, const QueryTsdbInput& input, TsdbManager& manager,
                         const std::vector<MetricsSource>& sources, mcp::CallContext* call, Json* stats = nullptr);

// One short human line per finding plus the verdict, for the text content and the CLI.
std::string QueryTsdbText(const Json& structured);

}  // namespace mt::tools
