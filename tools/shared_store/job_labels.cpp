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

std::string Matching(const JobLabel& l, const std::string& id) {
  return std::string("{__name__=~\"") + l.names + "\"," + l.label + "=\"" + id + "\"}";
}

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

// Per exporter, the number of the job's series with a sample in the `range` before each
// point. last_over_time keeps the metric name (unlike the other range functions), so a GPU's
// two metrics stay two series; and unlike a bare selector it still sees samples whose series
// went stale since (a job that ended: the exporter dropped its label, the scraper marked the
// series stale).
std::string Labelled(const std::string& id, const std::string& range) {
  return PerExporter(id, "count(last_over_time(", "[" + range + "]))");
}

}  // namespace

std::string JobLabelSelector(const std::string& id) { return IsJobId(id) ? PerExporter(id, "", "") : ""; }

std::vector<std::string> HostsFromJobLabels(TsdbContext& ctx, const std::string& job_id) {
  if (!IsJobId(job_id)) return {};
  const std::string by = PerExporter(job_id, "count by (Hostname, hostname, instance) (last_over_time(",
                                     "[" + PromDuration(ctx.data().seconds() + 60) + "]))");
  const std::string expr = "group by (host) (" + WithHostLabel("(" + by + ")", {"hostname", "Hostname"}) + ")";
  std::vector<std::string> hosts;
  for (const auto& s : ParseQueryData(ctx.client().Query(expr, ctx.data().end)))
    if (!s.label("host").empty()) hosts.push_back(s.label("host"));
  std::sort(hosts.begin(), hosts.end());
  return hosts;
}

std::optional<TsdbWindow> WindowFromJobLabels(const PrometheusClient& store, const std::string& job_id, double until,
                                              double lookback_s) {
  if (!IsJobId(job_id) || lookback_s <= 0) return std::nullopt;
  // Coarse: each point sees the samples of the step before it, so no job is missed however
  // short (at most 10,000 points over the lookback).
  const double coarse = std::max(300.0, std::ceil(lookback_s / 10000));
  const auto seen = RangePoints(store, Labelled(job_id, PromDuration(coarse)), until - lookback_s, until, coarse);
  if (seen.empty()) return std::nullopt;
  // Fine, at one second, in the first and the last coarse step that saw a sample: the first
  // and the last second that holds one.
  const std::string second = Labelled(job_id, "1s");
  const auto first = RangePoints(store, second, seen.front().t - coarse, seen.front().t, 1);
  const auto last = RangePoints(store, second, seen.back().t - coarse, seen.back().t, 1);
  if (first.empty() || last.empty() || last.back().t <= first.front().t) return std::nullopt;
  return TsdbWindow{first.front().t, last.back().t};
}

}  // namespace mt::tools
