// query_tsdb's answer as types: the tool's outputSchema and its JSON encoding both come from
// these structs (mcp/typed.h). The common part is in every mode; the rest belongs to one
// mode (discover, promql, playbook auto) and is absent in the others. What the fields mean
// is in docs/tools/query_tsdb.md.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mcp/typed.h"

namespace mt::tools {

// A check the mode ran: its rule, its verdict and the numbers behind it (per rule: an object
// of values and host lists, or a sentence when the budget had to drop them).
struct QueryFinding {
  std::string rule, verdict;
  Json evidence;
  template <class F> static void Fields(F& f) {
    f("rule", &QueryFinding::rule);
    f("verdict", &QueryFinding::verdict);
    f("evidence", &QueryFinding::evidence, {.schema = Json{{"type", Json::array({"object", "string"})}}});
  }
};

struct QueryOutlier {
  std::string host;
  std::optional<std::string> gpu;
  std::string metric;
  double value = 0, baseline = 0, score = 0;
  template <class F> static void Fields(F& f) {
    f("host", &QueryOutlier::host);
    f("gpu", &QueryOutlier::gpu);
    f("metric", &QueryOutlier::metric);
    f("value", &QueryOutlier::value);
    f("baseline", &QueryOutlier::baseline, {.description = "the other hosts' median"});
    f("score", &QueryOutlier::score, {.description = "robust z-score"});
  }
};

struct QueryWindow {
  std::string start, end;
  template <class F> static void Fields(F& f) {
    f("start", &QueryWindow::start);
    f("end", &QueryWindow::end);
  }
};

struct QueryTsdbInfo {
  std::string source, data_start, data_end;
  int64_t blocks = 0;
  std::optional<std::string> note;
  // Remote sources: where the job's window came from (arguments, the job's log), and where
  // its hosts did.
  std::optional<std::string> window_source;
  std::optional<std::string> hosts_source;
  template <class F> static void Fields(F& f) {
    f("source", &QueryTsdbInfo::source,
      {.description = "the job's own TSDB (live Prometheus or a private copy) or a configured remote source",
       .one_of = {"live", "private copy", "remote"}});
    f("data_start", &QueryTsdbInfo::data_start);
    f("data_end", &QueryTsdbInfo::data_end);
    f("blocks", &QueryTsdbInfo::blocks);
    f("note", &QueryTsdbInfo::note);
    f("window_source", &QueryTsdbInfo::window_source,
      {.one_of = {"arguments", "job log", "scheduler", "exporter labels"}});
    f("hosts_source", &QueryTsdbInfo::hosts_source,
      {.description = "remote source: where the job's hosts came from (its log's Slurm node list, the scheduler, its "
                      "NCCL lines, the exporters' job labels); absent when they were not found and `hosts` are the store's"});
  }
};

// discover
struct MetricFamily {
  std::string prefix;
  int64_t count = 0;
  std::vector<std::string> metrics;
  template <class F> static void Fields(F& f) {
    f("prefix", &MetricFamily::prefix);
    f("count", &MetricFamily::count);
    f("metrics", &MetricFamily::metrics, {.description = "the first 12 names"});
  }
};

// discover: a third-party exporter feeding the store (tools/tsdb/exporter_catalog.h)
struct ExporterFamilyAnswer {
  std::string family;
  std::vector<std::string> series;
  template <class F> static void Fields(F& f) {
    f("family", &ExporterFamilyAnswer::family);
    f("series", &ExporterFamilyAnswer::series, {.description = "the metric names found for it"});
  }
};
struct MissingFamilyAnswer {
  std::string family;
  std::string why;
  template <class F> static void Fields(F& f) {
    f("family", &MissingFamilyAnswer::family);
    f("why", &MissingFamilyAnswer::why, {.description = "off by default (and how to enable it), or on by default but absent"});
  }
};
struct ExporterAnswer {
  std::string exporter;
  std::string prefix;
  std::vector<std::string> detected_by;
  std::string host_label;
  int64_t hosts = 0;
  std::vector<ExporterFamilyAnswer> families;
  std::vector<MissingFamilyAnswer> missing;
  template <class F> static void Fields(F& f) {
    f("exporter", &ExporterAnswer::exporter,
      {.one_of = {"dcgm_exporter", "amd_device_metrics_exporter", "node_exporter"}});
    f("prefix", &ExporterAnswer::prefix, {.description = "the metric-name prefix in use (\"amd_\" or \"\")"});
    f("detected_by", &ExporterAnswer::detected_by);
    f("host_label", &ExporterAnswer::host_label, {.description = "the label the hosts were read from"});
    f("hosts", &ExporterAnswer::hosts);
    f("families", &ExporterAnswer::families, {.description = "mt families this exporter provides here"});
    f("missing", &ExporterAnswer::missing,
      {.description = "families absent from the store: no conclusion may rest on them"});
  }
};

// promql
struct SeriesSummary {
  std::string series;
  double last = 0;
  std::optional<double> min, mean, max;
  std::optional<int64_t> n;
  template <class F> static void Fields(F& f) {
    f("series", &SeriesSummary::series);
    f("last", &SeriesSummary::last);
    f("min", &SeriesSummary::min);
    f("mean", &SeriesSummary::mean);
    f("max", &SeriesSummary::max);
    f("n", &SeriesSummary::n);
  }
};

// A host and one number of it (a mean, a value that stands out); also compare_jobs'.
struct HostValue {
  std::string host;
  double value = 0;
  template <class F> static void Fields(F& f) {
    f("host", &HostValue::host);
    f("value", &HostValue::value);
  }
};

struct RawPoints {
  std::string series;
  Json values;   // [[ISO-8601 time, value], …]
  int64_t of = 0;
  template <class F> static void Fields(F& f) {
    const Json pair = Json{{"type", "array"},
                           {"prefixItems", Json::array({Json{{"type", "string"}}, Json{{"type", "number"}}})},
                           {"minItems", 2},
                           {"maxItems", 2}};
    f("series", &RawPoints::series);
    f("values", &RawPoints::values, {.description = "[time, value] pairs, evenly spaced",
                                     .schema = Json{{"type", "array"}, {"items", pair}}});
    f("of", &RawPoints::of, {.description = "points the series has"});
  }
};

// playbook auto: the attributed family and the hosts to blame (tsdb_attribution.h).
inline const std::vector<std::string>& FaultFamilies() {
  static const std::vector<std::string> all = {"none",       "thermal",   "rdma",     "tcp",
                                               "io_stall",   "cpu_contention", "node_death", "host_oom",
                                               "collective_hang", "training", "unknown"};
  return all;
}

struct QueryCulprit {
  std::string host, family, onset;
  std::optional<int64_t> onset_step;
  double confidence = 0;
  std::string metric;
  double baseline = 0, during = 0, score = 0;
  template <class F> static void Fields(F& f) {
    f("host", &QueryCulprit::host);
    f("family", &QueryCulprit::family, {.one_of = FaultFamilies()});
    f("onset", &QueryCulprit::onset);
    f("onset_step", &QueryCulprit::onset_step);
    f("confidence", &QueryCulprit::confidence);
    f("metric", &QueryCulprit::metric);
    f("baseline", &QueryCulprit::baseline);
    f("during", &QueryCulprit::during);
    f("score", &QueryCulprit::score);
  }
};

struct SlowPhase {
  std::vector<int64_t> steps;
  std::string start, end;
  double tgs_change_pct = 0;
  template <class F> static void Fields(F& f) {
    f("steps", &SlowPhase::steps, {.description = "[first, last]"});
    f("start", &SlowPhase::start);
    f("end", &SlowPhase::end);
    f("tgs_change_pct", &SlowPhase::tgs_change_pct);
  }
};

struct SymptomAnswer {
  std::string kind, source;
  double baseline_tgs = 0;
  std::vector<SlowPhase> slow_phases;
  bool stopped = false;
  std::string why;
  std::optional<std::string> pattern, progress_end;
  template <class F> static void Fields(F& f) {
    f("kind", &SymptomAnswer::kind, {.one_of = {"none", "slowdown", "stop", "unknown"}});
    f("source", &SymptomAnswer::source, {.description = "log, tsdb, or empty: no step series"});
    f("baseline_tgs", &SymptomAnswer::baseline_tgs);
    f("slow_phases", &SymptomAnswer::slow_phases);
    f("stopped", &SymptomAnswer::stopped);
    f("why", &SymptomAnswer::why);
    f("pattern", &SymptomAnswer::pattern);
    f("progress_end", &SymptomAnswer::progress_end);
  }
};

struct FamilyCheckAnswer {
  std::string family, signal, verdict;
  std::vector<std::string> hosts;
  std::optional<double> score;
  std::optional<std::string> missing;
  template <class F> static void Fields(F& f) {
    f("family", &FamilyCheckAnswer::family);
    f("signal", &FamilyCheckAnswer::signal, {.description = "the concrete series read"});
    f("verdict", &FamilyCheckAnswer::verdict, {.one_of = {"aligned", "uniform", "quiet", "no_data", "missing"}});
    f("hosts", &FamilyCheckAnswer::hosts);
    f("score", &FamilyCheckAnswer::score);
    f("missing", &FamilyCheckAnswer::missing,
      {.description = "verdict missing: the store does not collect this signal, why, and how to enable it"});
  }
};

struct DataCoverageAnswer {
  std::string verdict = "complete";
  std::optional<std::string> data_end;
  std::vector<std::string> gappy_hosts, ended_hosts;
  std::optional<std::string> note;
  template <class F> static void Fields(F& f) {
    f("verdict", &DataCoverageAnswer::verdict,
      {.description = "whether the store holds the window's samples: complete; gappy (hosts with stretches of no sample, "
                      "`up` included, or whose samples end while others go on); stale (the samples end before the window)",
       .one_of = {"complete", "gappy", "stale"}});
    f("data_end", &DataCoverageAnswer::data_end, {.description = "verdict stale: the store's newest sample"});
    f("gappy_hosts", &DataCoverageAnswer::gappy_hosts, {.description = "hosts with holes, largest first (at most 8)"});
    f("ended_hosts", &DataCoverageAnswer::ended_hosts,
      {.description = "hosts whose samples end, `up` included, with no failed scrape on record (at most 8)"});
    f("note", &DataCoverageAnswer::note);
  }
};

struct AttributionAnswer {
  SymptomAnswer symptom;
  DataCoverageAnswer data_coverage;
  std::vector<FamilyCheckAnswer> checks;
  std::string why;
  std::optional<std::string> undecided;
  std::optional<std::string> playbook_chosen_because;
  template <class F> static void Fields(F& f) {
    f("symptom", &AttributionAnswer::symptom);
    f("data_coverage", &AttributionAnswer::data_coverage);
    f("checks", &AttributionAnswer::checks);
    f("why", &AttributionAnswer::why);
    f("undecided", &AttributionAnswer::undecided, {.description = "for family unknown: what would decide it"});
    f("playbook_chosen_because", &AttributionAnswer::playbook_chosen_because);
  }
};

struct QueryAnswer {
  std::string mode, job;
  std::optional<std::string> playbook;
  QueryWindow window;
  QueryTsdbInfo tsdb;
  std::vector<std::string> hosts;
  std::optional<int64_t> hosts_total;
  std::vector<QueryFinding> findings;
  std::vector<QueryOutlier> outliers;
  std::string verdict;
  std::vector<std::string> notes;
  bool truncated = false;
  std::optional<std::string> omitted;
  std::optional<int64_t> queries;
  // discover
  std::optional<std::vector<MetricFamily>> families;
  std::optional<int64_t> metric_count;
  std::optional<std::map<std::string, double>> up_at_end;
  std::optional<std::vector<ExporterAnswer>> exporters;
  // promql
  std::optional<std::vector<SeriesSummary>> series;
  std::optional<int64_t> series_total, samples_total;
  std::optional<std::vector<HostValue>> host_ranking;
  std::optional<RawPoints> points;
  std::optional<double> step_seconds;
  // playbook auto
  std::optional<std::string> family;
  std::optional<bool> uniform;
  std::optional<std::vector<QueryCulprit>> culprits;
  std::optional<AttributionAnswer> attribution;
  template <class F> static void Fields(F& f) {
    using Q = QueryAnswer;
    f("mode", &Q::mode, {.one_of = {"discover", "promql", "playbook", "correlate"}});
    f("job", &Q::job);
    f("playbook", &Q::playbook, {.description = "the playbook that ran (auto: the one attribution chose)"});
    f("window", &Q::window);
    f("tsdb", &Q::tsdb);
    f("hosts", &Q::hosts, {.description = "the job's hosts (the first 64)"});
    f("hosts_total", &Q::hosts_total);
    f("findings", &Q::findings);
    f("outliers", &Q::outliers);
    f("verdict", &Q::verdict);
    f("notes", &Q::notes);
    f("truncated", &Q::truncated);
    f("omitted", &Q::omitted);
    f("queries", &Q::queries, {.description = "PromQL queries this answer took"});
    f("families", &Q::families, {.description = "discover: metric families by prefix"});
    f("metric_count", &Q::metric_count);
    f("up_at_end", &Q::up_at_end, {.description = "discover: scrape targets answering at the end of the data, per job label"});
    f("exporters", &Q::exporters,
      {.description = "discover: third-party exporters feeding the store, their families, hosts and missing families"});
    f("series", &Q::series, {.description = "promql: per series statistics, highest mean first"});
    f("series_total", &Q::series_total);
    f("samples_total", &Q::samples_total);
    f("host_ranking", &Q::host_ranking);
    f("points", &Q::points);
    f("step_seconds", &Q::step_seconds);
    f("family", &Q::family, {.description = "playbook auto: the attributed fault family", .one_of = FaultFamilies()});
    f("uniform", &Q::uniform, {.description = "the cause sits on every host alike: no host to blame"});
    f("culprits", &Q::culprits);
    f("attribution", &Q::attribution);
  }
};

}  // namespace mt::tools
