#include "tools/shared_store/job_labels.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "tools/tsdb/store_signals.h"
#include "tools/tsdb/tsdb_series.h"

namespace mt::tools {
namespace {

// The exporters' own name spaces only: other exporters (a Slurm exporter's job_id) name jobs
// too, but not the GPU hosts they ran on. AMD's with or without its prefix.
struct JobLabel {
  const char* names;   // regex over __name__
  const char* label;
};
constexpr JobLabel kJobLabels[] = {{"DCGM_.+", "hpc_job"}, {"(amd_)?gpu_.+", "job_id"}};

bool IsJobId(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  return std::all_of(id.begin(), id.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'; });
}

std::string Selector(const std::string& name_matcher, const JobLabel& l, const std::string& id) {
  return "{__name__" + name_matcher + "," + l.label + "=\"" + id + "\"}";
}

std::string Matching(const JobLabel& l, const std::string& id) { return Selector(std::string("=~\"") + l.names + "\"", l, id); }

// `wrap` around each exporter's selector, joined with `or`.
std::string PerExporter(const std::string& id, const std::string& before, const std::string& after) {
  std::string out;
  for (const auto& l : kJobLabels) out += (out.empty() ? "" : " or ") + before + Matching(l, id) + after;
  return out;
}

// The points of an expression that aggregates to one series, in time order.
std::vector<TsdbPoint> RangePoints(const PrometheusClient& store, const std::string& expr, double start, double end,
                                   double step) {
  std::vector<TsdbPoint> out;
  for (const auto& s : ParseQueryData(store.QueryRange(expr, start, end, step)))
    out.insert(out.end(), s.points.begin(), s.points.end());
  std::sort(out.begin(), out.end(), [](const TsdbPoint& a, const TsdbPoint& b) { return a.t < b.t; });
  return out;
}

// The newest labelled sample at `at`. timestamp() drops the metric name, so two metrics of
// one GPU would clash: it reads one metric per exporter.
double NewestSample(const PrometheusClient& store, const std::string& id, double at) {
  double newest = 0;
  for (const auto& l : kJobLabels) {
    const auto names = ParseQueryData(store.Query("count by (__name__) (" + Matching(l, id) + ")", at));
    if (names.empty()) continue;
    std::string one = names.front().label("__name__");
    for (const auto& n : names) one = std::min(one, n.label("__name__"));
    for (const auto& s : ParseQueryData(store.Query("max(timestamp(" + Selector("=\"" + one + "\"", l, id) + "))", at)))
      for (const auto& p : s.points) newest = std::max(newest, p.v);
  }
  return newest;
}

}  // namespace

std::string JobLabelSelector(const std::string& id) { return IsJobId(id) ? PerExporter(id, "", "") : ""; }

// Functions of a range or a sample drop the metric name, and a GPU's series of two metrics
// then share a label set (an error in PromQL): the selectors are aggregated first.
std::vector<std::string> HostsFromJobLabels(TsdbContext& ctx, const std::string& job_id) {
  if (!IsJobId(job_id)) return {};
  const std::string by = PerExporter(job_id, "count by (Hostname, hostname, instance) (", ")");
  const std::string expr = "group by (host) (" +
                           WithHostLabel("max_over_time((" + by + ")[" + PromDuration(ctx.data().seconds() + 60) + ":1m])",
                                         {"hostname", "Hostname"}) +
                           ")";
  std::vector<std::string> hosts;
  for (const auto& s : ParseQueryData(ctx.client().Query(expr, ctx.data().end)))
    if (!s.label("host").empty()) hosts.push_back(s.label("host"));
  std::sort(hosts.begin(), hosts.end());
  return hosts;
}

std::optional<TsdbWindow> WindowFromJobLabels(const PrometheusClient& store, const std::string& job_id, double until,
                                              double lookback_s) {
  if (!IsJobId(job_id) || lookback_s <= 0) return std::nullopt;
  const std::string count = PerExporter(job_id, "count(", ")");
  // Coarse: a point sees the samples of Prometheus' lookback before it (5 minutes unless the
  // store sets --query.lookback-delta lower), so points 5 minutes apart miss none (more
  // apart over long lookbacks: a job shorter than the step may then be missed, and the
  // answer says to give start and end).
  const double coarse = std::max(300.0, std::ceil(lookback_s / 10000));
  const auto seen = RangePoints(store, count, until - lookback_s, until, coarse);
  if (seen.empty()) return std::nullopt;
  // The first sample: the first point, at one second, that sees one.
  const auto first = RangePoints(store, count, seen.front().t - coarse, seen.front().t, 1);
  // The last: the next coarse point saw none, so nothing came after the newest sample the
  // last coarse point sees.
  const double end = NewestSample(store, job_id, seen.back().t);
  if (first.empty() || end <= first.front().t) return std::nullopt;
  return TsdbWindow{first.front().t, end};
}

}  // namespace mt::tools
