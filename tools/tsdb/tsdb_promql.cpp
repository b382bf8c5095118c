// query_tsdb mode "promql": any PromQL, answered as a summary instead of the raw matrix.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tools/tsdb/tsdb_modes.h"

namespace mt::tools {
namespace {

// Above this many samples in one answer the step is raised (downsampling) and the agent
// is told; if even 10 points per series would exceed it, the query is refused.
constexpr double kMaxTotalPoints = 500'000;
constexpr size_t kSeriesShown = 20;

using RankedSeries = std::vector<std::pair<SeriesStats, const TsdbSeries*>>;

// How many series? count() of the expression at the end of the window.
double CountSeries(TsdbContext& tsdb, const std::string& query, double at) {
  double n_series = 1;
  try {
    auto cnt = tsdb.Instant("count(" + query + ")", at);
    if (!cnt.empty() && !cnt[0].points.empty()) n_series = std::max(1.0, cnt[0].points.back().v);
  } catch (const PrometheusError& e) {
    if (e.kind() == PrometheusError::Kind::kBadData) {
      // count() of a scalar is invalid; the query itself tells whether it is.
    } else {
      throw;
    }
  }
  return n_series;
}

// The requested window clamped to the data (noted when it was).
TsdbWindow RangeWindow(TsdbContext& tsdb, const PromqlRequest& q, ModeResult& r) {
  TsdbWindow w{q.start.value_or(tsdb.data().start), q.end.value_or(tsdb.data().end)};
  if (w.end <= w.start) throw std::invalid_argument("end must be after start");
  TsdbWindow c = tsdb.Clamp(w);
  if (c.start != w.start || c.end != w.end)
    r.notes.push_back("window clamped to the data range " + IsoTime(tsdb.data().start) + " – " + IsoTime(tsdb.data().end));
  if (c.seconds() <= 0) throw std::invalid_argument("the window does not overlap the TSDB's data range");
  return c;
}

// The step of a range query over `w`: the requested one, raised to at most 11,000 points
// per series and to at most kMaxTotalPoints samples in all (each raise noted).
double RangeStep(TsdbContext& tsdb, const PromqlRequest& q, const TsdbWindow& w, ModeResult& r) {
  double step = ChooseStep(w.seconds(), q.step.value_or(0));
  if (q.step && step > *q.step)
    r.notes.push_back("step raised from " + std::to_string(static_cast<long>(*q.step)) + " s to " +
                      std::to_string(static_cast<long>(step)) + " s (at most 11,000 points per series)");
  const double n_series = CountSeries(tsdb, q.query, w.end);
  double total = n_series * (w.seconds() / step + 1);
  if (total > kMaxTotalPoints) {
    double needed = std::ceil(n_series * w.seconds() / kMaxTotalPoints);
    if (w.seconds() / needed < 10)
      throw std::invalid_argument("the query selects " + std::to_string(static_cast<long>(n_series)) +
                                  " series; even 10 points each over this window exceed " +
                                  std::to_string(static_cast<long>(kMaxTotalPoints)) +
                                  " samples. Aggregate it (e.g. avg by (host) (...)) or narrow the selector");
    r.notes.push_back("downsampled: " + std::to_string(static_cast<long>(n_series)) + " series × " +
                      std::to_string(static_cast<long>(w.seconds() / step + 1)) + " points would be " +
                      std::to_string(static_cast<long>(total)) + " samples; step raised to " +
                      std::to_string(static_cast<long>(needed)) + " s");
    step = needed;
  }
  return step;
}

std::vector<TsdbSeries> QuerySeries(TsdbContext& tsdb, const PromqlRequest& q, bool range, ModeResult& r) {
  if (range) {
    const TsdbWindow w = RangeWindow(tsdb, q, r);
    const double step = RangeStep(tsdb, q, w, r);
    r.window = w;
    r.extra["step_seconds"] = step;
    return tsdb.Range(q.query, w, step);
  }
  double t = q.time.value_or(tsdb.data().end);
  r.window = {t, t};
  return tsdb.Instant(q.query, t);
}

// Per series statistics, ranked by mean (highest first).
RankedSeries RankByMean(const std::vector<TsdbSeries>& series) {
  RankedSeries stats;
  for (const auto& s : series)
    if (!s.points.empty()) stats.emplace_back(Stats(s), &s);
  std::sort(stats.begin(), stats.end(), [](const auto& a, const auto& b) { return a.first.mean > b.first.mean; });
  return stats;
}

// The top kSeriesShown series and the totals; returns the number of samples.
size_t AddSeriesSummary(const RankedSeries& stats, bool range, ModeResult& r) {
  Json out = Json::array();
  size_t samples = 0;
  for (const auto& [st, s] : stats) samples += s->points.size();
  for (size_t i = 0; i < stats.size() && i < kSeriesShown; ++i) {
    const auto& [st, s] = stats[i];
    Json j = {{"series", SeriesKey(*s)}, {"last", Round(st.last)}};
    if (range) {
      j["min"] = Round(st.min);
      j["mean"] = Round(st.mean);
      j["max"] = Round(st.max);
      j["n"] = st.n;
    }
    out.push_back(j);
  }
  r.extra["series"] = out;
  r.extra["series_total"] = stats.size();
  r.extra["samples_total"] = samples;
  return samples;
}

// Per host: the mean of its series' means, ranked.
void AddHostRanking(const RankedSeries& stats, ModeResult& r) {
  std::map<std::string, std::pair<double, int>> by_host;
  for (const auto& [st, s] : stats) {
    std::string h = s->label("host");
    if (h.empty()) continue;
    by_host[h].first += st.mean;
    by_host[h].second += 1;
  }
  if (by_host.size() > 1) {
    std::vector<std::pair<std::string, double>> hv;
    for (auto& [h, p] : by_host) hv.emplace_back(h, p.first / p.second);
    std::sort(hv.begin(), hv.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    Json rank = Json::array();
    for (size_t i = 0; i < hv.size(); ++i)
      if (i < 5 || i + 5 >= hv.size()) rank.push_back({{"host", hv[i].first}, {"value", Round(hv[i].second)}});
    r.extra["host_ranking"] = rank;
  }
}

// Outliers across series (robust z of the means); returns how many series are outlying.
size_t AddOutliers(const RankedSeries& stats, const PromqlRequest& q, ModeResult& r) {
  std::vector<double> means;
  for (const auto& [st, s] : stats) means.push_back(st.mean);
  auto scores = RobustScores(means);
  double baseline = Median(means);
  std::vector<size_t> idx;
  for (size_t i = 0; i < scores.size(); ++i)
    if (std::fabs(scores[i]) >= 3.5) idx.push_back(i);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return std::fabs(scores[a]) > std::fabs(scores[b]); });
  for (size_t k = 0; k < idx.size() && k < 10; ++k) {
    const auto* s = stats[idx[k]].second;
    std::string metric = s->label("__name__").empty() ? q.query : s->label("__name__");
    AddOutlier(r.outliers, s->label("host"), s->label("gpu"), metric, means[idx[k]], baseline, scores[idx[k]]);
  }
  if (idx.size() > 10) r.notes.push_back(std::to_string(idx.size()) + " outlying series, 10 shown");
  return idx.size();
}

// At most `points` raw points, of the top series, evenly spaced.
void AddRawPoints(const RankedSeries& stats, const PromqlRequest& q, ModeResult& r) {
  const auto& pts = stats[0].second->points;
  Json raw = Json::array();
  size_t n = std::min<size_t>(static_cast<size_t>(q.points), pts.size());
  for (size_t i = 0; i < n; ++i) {
    size_t k = n == 1 ? pts.size() - 1 : i * (pts.size() - 1) / (n - 1);
    raw.push_back({IsoTime(pts[k].t), Round(pts[k].v, 6)});
  }
  r.extra["points"] = {{"series", SeriesKey(*stats[0].second)}, {"values", raw}, {"of", pts.size()}};
}

void AddVerdict(const RankedSeries& stats, size_t samples, size_t outlying, ModeResult& r) {
  Json ev = {{"series", stats.size()}, {"samples", samples}};
  r.findings.push_back({{"rule", "query answered"}, {"verdict", stats.empty() ? "empty" : "ok"}, {"evidence", ev}});
  if (stats.empty()) {
    r.verdict = "The query returned no data in this window (check the metric name with mode discover, and the time).";
  } else {
    const auto& top = stats.front();
    r.verdict = std::to_string(stats.size()) + " series; highest " + SeriesKey(*top.second) + " (mean " +
                Num(top.first.mean) + ")" +
                (outlying == 0 ? ", no outliers." : ", " + std::to_string(outlying) + " outlying series.");
  }
}

}  // namespace

ModeResult RunPromql(TsdbContext& tsdb, const PromqlRequest& q) {
  ModeResult r;
  const bool range = q.start || q.end || q.step;
  const std::vector<TsdbSeries> series = QuerySeries(tsdb, q, range, r);
  const RankedSeries stats = RankByMean(series);
  const size_t samples = AddSeriesSummary(stats, range, r);
  AddHostRanking(stats, r);
  const size_t outlying = AddOutliers(stats, q, r);
  if (q.points > 0 && !stats.empty() && range) AddRawPoints(stats, q, r);
  AddVerdict(stats, samples, outlying, r);
  return r;
}

}  // namespace mt::tools
