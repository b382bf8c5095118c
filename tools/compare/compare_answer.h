// compare_jobs' answer as types: the tool's outputSchema and its JSON encoding both come from
// these structs (mcp/typed.h). What the fields mean is in docs/tools/compare_jobs.md.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mcp/typed.h"
#include "tools/compare/compare_tsdb.h"
#include "tools/tsdb/query_answer.h"

namespace mt::tools {

using mcp::Nullable;

// A compared job as triage saw it.
struct CompareJobRow {
  std::string job;
  std::string status;
  std::string cls;
  Nullable<int64_t> first_step, last_step, nodes;
  template <class F> static void Fields(F& f) {
    f("job", &CompareJobRow::job);
    f("status", &CompareJobRow::status);
    f("class", &CompareJobRow::cls);
    f("first_step", &CompareJobRow::first_step);
    f("last_step", &CompareJobRow::last_step);
    f("nodes", &CompareJobRow::nodes);
  }
};

struct CompareTgsAnswer {
  Nullable<double> a, b, delta_pct;
  double a_std = 0, b_std = 0;
  Nullable<std::vector<int64_t>> steps;
  std::vector<int64_t> n, spikes_excluded;
  Nullable<double> t;
  bool significant = false;
  bool comparable = false;
  std::optional<std::vector<std::string>> caveats;
  template <class F> static void Fields(F& f) {
    using G = CompareTgsAnswer;
    f("a", &G::a, {.description = "A's steady mean TGS over the compared steps, spikes excluded"});
    f("b", &G::b);
    f("delta_pct", &G::delta_pct, {.description = "(b - a) / a in percent"});
    f("a_std", &G::a_std);
    f("b_std", &G::b_std);
    f("steps", &G::steps, {.description = "[first, last]: the overlapping steady step range"});
    f("n", &G::n, {.description = "steps compared in A and B"});
    f("spikes_excluded", &G::spikes_excluded);
    f("t", &G::t, {.description = "Welch t of the per-step values"});
    f("significant", &G::significant, {.description = "|t| >= 5 and |delta| >= 0.5 %"});
    f("comparable", &G::comparable, {.description = "false when a job failed: its throughput covers only part"});
    f("caveats", &G::caveats);
  }
};

struct ConfigDiffRow {
  std::string key, kind, a, b;
  template <class F> static void Fields(F& f) {
    f("key", &ConfigDiffRow::key);
    f("kind", &ConfigDiffRow::kind,
      {.one_of = {"passthrough", "env", "nodes", "hosts", "model", "config", "artifact"}});
    f("a", &ConfigDiffRow::a, {.description = "\"(unset)\" when A does not have it"});
    f("b", &ConfigDiffRow::b);
  }
};

struct CompareMetric {
  std::string metric, kind;
  double a = 0, b = 0, a_mean = 0, b_mean = 0, delta = 0, delta_pct = 0;
  bool hosts_consistent = false, significant = false;
  std::string pattern;
  double score = 0;
  std::string unit, hosts_compared;
  std::optional<std::string> hosts_in;
  std::optional<std::vector<HostValue>> hosts;
  template <class F> static void Fields(F& f) {
    using M = CompareMetric;
    f("metric", &M::metric);
    f("kind", &M::kind, {.one_of = {"contention", "training", "throughput"}});
    f("a", &M::a, {.description = "median over A's hosts (per second for counters)"});
    f("b", &M::b);
    f("a_mean", &M::a_mean);
    f("b_mean", &M::b_mean);
    f("delta", &M::delta);
    f("delta_pct", &M::delta_pct);
    f("hosts_consistent", &M::hosts_consistent);
    f("significant", &M::significant);
    f("pattern", &M::pattern, {.one_of = {"uniform", "hosts", "none"}});
    f("score", &M::score, {.description = "effect size in noise units"});
    f("unit", &M::unit, {.one_of = {"per second", "median"}});
    f("hosts_compared", &M::hosts_compared, {.description = "hosts of A / hosts of B"});
    f("hosts_in", &M::hosts_in, {.one_of = {"a", "b", "both"}});
    f("hosts", &M::hosts, {.description = "the hosts that stand out, most first"});
  }
};

struct LogDiffRow {
  std::string item;
  Json a, b;   // a count, a step (null: none) or a flag
  std::string note;
  template <class F> static void Fields(F& f) {
    const Json value = Json{{"type", Json::array({"integer", "boolean", "null"})}};
    f("item", &LogDiffRow::item);
    f("a", &LogDiffRow::a, {.schema = value});
    f("b", &LogDiffRow::b, {.schema = value});
    f("note", &LogDiffRow::note);
  }
};

// Both jobs' profiler traces, rank 0 against rank 0 (tools/trace/trace_diff.h).
struct TraceCategoryDelta {
  std::string category;                  // step_time | compute | comm | exposed_comm | memcpy_memset_exposed | idle
  Nullable<double> a_ms, b_ms, delta_ms, a_pct, b_pct;
  template <class F> static void Fields(F& f) {
    f("category", &TraceCategoryDelta::category);
    f("a_ms", &TraceCategoryDelta::a_ms);
    f("b_ms", &TraceCategoryDelta::b_ms);
    f("delta_ms", &TraceCategoryDelta::delta_ms);
    f("a_pct", &TraceCategoryDelta::a_pct, {.description = "of A's step"});
    f("b_pct", &TraceCategoryDelta::b_pct);
  }
};

struct TraceOpDelta {
  std::string name;                      // cut to 80 bytes
  double a_ms_per_step = 0, b_ms_per_step = 0, delta_ms = 0;
  template <class F> static void Fields(F& f) {
    f("name", &TraceOpDelta::name);
    f("a_ms_per_step", &TraceOpDelta::a_ms_per_step);
    f("b_ms_per_step", &TraceOpDelta::b_ms_per_step);
    f("delta_ms", &TraceOpDelta::delta_ms);
  }
};

struct CompareTraceView {
  std::string a_file, b_file;            // job-dir-relative
  std::string summary;
  std::vector<TraceCategoryDelta> categories;
  std::vector<TraceOpDelta> ops;         // the 5 that changed most
  std::string a_straggler, b_straggler;  // each job's rank verdict
  template <class F> static void Fields(F& f) {
    f("a_file", &CompareTraceView::a_file);
    f("b_file", &CompareTraceView::b_file);
    f("summary", &CompareTraceView::summary);
    f("categories", &CompareTraceView::categories);
    f("ops", &CompareTraceView::ops);
    f("a_straggler", &CompareTraceView::a_straggler, {.description = "A's ranks: straggler N | balanced | unknown"});
    f("b_straggler", &CompareTraceView::b_straggler);
  }
};

struct CompareTsdbUse {
  bool used = false;
  std::optional<std::string> reason;
  std::optional<std::vector<SweepWindow>> windows;
  std::optional<int64_t> metrics_compared, queries, significant;
  template <class F> static void Fields(F& f) {
    using T = CompareTsdbUse;
    f("used", &T::used);
    f("reason", &T::reason, {.description = "why the TSDBs were not compared"});
    f("windows", &T::windows);
    f("metrics_compared", &T::metrics_compared);
    f("queries", &T::queries);
    f("significant", &T::significant);
  }
};

struct PairCulprit {
  std::string host, family, job_side, metric;
  double value = 0, baseline = 0, confidence = 0;
  template <class F> static void Fields(F& f) {
    f("host", &PairCulprit::host);
    f("family", &PairCulprit::family);
    f("job_side", &PairCulprit::job_side, {.one_of = {"a", "b", "both"}});
    f("metric", &PairCulprit::metric);
    f("value", &PairCulprit::value);
    f("baseline", &PairCulprit::baseline);
    f("confidence", &PairCulprit::confidence);
  }
};

// A further job against the baseline (jobs[2…]), in brief.
struct CompareMoreTgs {
  Nullable<double> a, b, delta_pct;
  bool significant = false;
  template <class F> static void Fields(F& f) {
    f("a", &CompareMoreTgs::a);
    f("b", &CompareMoreTgs::b);
    f("delta_pct", &CompareMoreTgs::delta_pct);
    f("significant", &CompareMoreTgs::significant);
  }
};

struct CompareMore {
  std::string b;
  CompareMoreTgs tgs;
  std::vector<ConfigDiffRow> config_diff;
  std::vector<CompareMetric> metrics;
  std::vector<LogDiffRow> log_diff;
  std::string verdict;
  template <class F> static void Fields(F& f) {
    f("b", &CompareMore::b);
    f("tgs", &CompareMore::tgs);
    f("config_diff", &CompareMore::config_diff);
    f("metrics", &CompareMore::metrics);
    f("log_diff", &CompareMore::log_diff);
    f("verdict", &CompareMore::verdict);
  }
};

// The pair's diagnosis: did a host metric differ beyond noise, through which fault family,
// on which hosts (pair_diagnosis.h).
struct PairVerdict {
  bool significant = false;
  std::string family;
  bool uniform = false;
  std::vector<PairCulprit> culprits;
  std::string why;
};

struct CompareAnswer {
  std::string a, b;
  std::vector<CompareJobRow> jobs;
  CompareTgsAnswer tgs;
  std::vector<ConfigDiffRow> config_diff;
  std::vector<CompareMetric> metrics;
  int64_t metrics_significant = 0;
  std::vector<LogDiffRow> log_diff;
  CompareTsdbUse tsdb;
  Nullable<CompareTraceView> trace;
  std::string verdict;
  std::vector<std::string> notes;
  std::optional<std::vector<CompareMore>> more;
  bool truncated = false;
  std::optional<std::string> omitted;
  // The pair's diagnosis (PairVerdict), at the top level where scorers and agents read it.
  bool significant = false;
  std::string family;
  bool uniform = false;
  std::vector<PairCulprit> culprits;
  std::string why;
  void SetDiagnosis(PairVerdict d) {
    significant = d.significant;
    family = std::move(d.family);
    uniform = d.uniform;
    culprits = std::move(d.culprits);
    why = std::move(d.why);
  }
  template <class F> static void Fields(F& f) {
    using C = CompareAnswer;
    f("a", &C::a, {.description = "the baseline job"});
    f("b", &C::b);
    f("jobs", &C::jobs);
    f("tgs", &C::tgs);
    f("config_diff", &C::config_diff);
    f("metrics", &C::metrics, {.description = "host metrics ranked by effect size, significant ones first"});
    f("metrics_significant", &C::metrics_significant);
    f("log_diff", &C::log_diff);
    f("tsdb", &C::tsdb);
    f("trace", &C::trace, {.description = "the step decomposition of both jobs' profiler traces, when both have one"});
    f("verdict", &C::verdict);
    f("notes", &C::notes);
    f("more", &C::more, {.description = "each further job against the baseline (three jobs or more)"});
    f("truncated", &C::truncated);
    f("omitted", &C::omitted);
    f("significant", &C::significant, {.description = "a host metric differs beyond noise between A and B"});
    f("family", &C::family, {.description = "the fault family of that metric; none, or unknown without TSDBs"});
    f("uniform", &C::uniform, {.description = "every common host moved the same way: no host to blame"});
    f("culprits", &C::culprits, {.description = "hosts that stand out against their own job and every host of the other"});
    f("why", &C::why);
  }
};

}  // namespace mt::tools
