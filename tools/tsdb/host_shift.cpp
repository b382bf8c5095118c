#include "tools/tsdb/host_shift.h"

#include <algorithm>
#include <cmath>

#include "tools/common/stats.h"

namespace mt::tools {
namespace {

// Samples of one host inside [a, b]; when the margins leave too few, the whole segment.
// A level needs kMinSamples: the median of two samples is half a single-scrape spike.
constexpr size_t kMinSamples = 5;
std::vector<double> Inside(const std::vector<TsdbPoint>& pts, double a, double b, double margin) {
  std::vector<double> v;
  for (const auto& p : pts)
    if (p.t >= a + margin && p.t <= b - margin) v.push_back(p.v);
  if (v.size() >= kMinSamples || margin == 0) return v;
  return Inside(pts, a, b, 0);
}

// The spread of the hosts that did not move: the MAD of the lower half of the shifts,
// scaled so that it estimates a normal standard deviation like a full-sample MAD would
// (the lower half of a normal sample has a MAD of ~0.59 sigma after the usual 1.4826).
double LowerHalfSpread(std::vector<double> shifts) {
  if (shifts.size() < 2) return 0;
  std::sort(shifts.begin(), shifts.end());
  shifts.resize((shifts.size() + 1) / 2);
  return RobustStd(shifts) / 0.59;
}

// A host's healthy samples; a short healthy stretch (a fault soon after the first step)
// keeps its samples with narrower margins rather than leave the host without a baseline.
std::vector<double> Healthy(const std::vector<TsdbPoint>& pts, const Symptom& symptom, double margin) {
  for (double m : {margin, std::min(margin, symptom.scrape_s), 0.0}) {
    std::vector<double> v;
    for (const auto& p : pts)
      if (InHealthy(symptom, p.t, m)) v.push_back(p.v);
    if (v.size() >= kMinSamples || m == 0) return v;
  }
  return {};
}

// How much a level measured as a median over a stretch of samples varies: the robust
// spread of the medians of consecutive blocks of five samples. Autocorrelation and slow
// drift widen it as they should; single-sample jitter, which a median of many samples
// averages away, does not (it is ~0.56 of the per-sample noise for white noise).
double LevelNoise(const std::vector<double>& v) {
  constexpr size_t kBlock = 5;
  if (v.size() < 3 * kBlock) return RobustStd(v);
  std::vector<double> medians;
  for (size_t i = 0; i + kBlock <= v.size(); i += kBlock)
    medians.push_back(Median(std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(i), v.begin() + static_cast<std::ptrdiff_t>(i + kBlock))));
  return RobustStd(medians);
}

}  // namespace

SegmentShifts ShiftsInSegment(const std::vector<HostSeries>& series, const Symptom& symptom, const SlowSegment& segment,
                              double floor, double margin) {
  SegmentShifts out;
  std::vector<double> during_all;
  for (const auto& s : series) {
    std::vector<double> during = Inside(s.points, segment.t0, segment.t1, margin);
    if (during.size() < kMinSamples) continue;
    std::vector<double> healthy = Healthy(s.points, symptom, margin);
    HostShift h;
    h.host = s.host;
    h.points = &s.points;
    h.during = Median(during);
    h.own_baseline = healthy.size() >= kMinSamples;
    if (h.own_baseline) {
      h.baseline = Median(healthy);
      h.noise = LevelNoise(healthy);
      h.shift = h.during - h.baseline;
    }
    during_all.push_back(h.during);
    out.hosts.push_back(h);
  }
  if (out.hosts.empty()) return out;

  std::vector<double> shifts, noises;
  for (const auto& h : out.hosts)
    if (h.own_baseline) {
      shifts.push_back(h.shift);
      noises.push_back(h.noise);
    }
  out.median_shift = shifts.empty() ? 0 : Median(shifts);
  out.common_shift = shifts.empty() ? 0 : Quantile(shifts, 0.25);
  out.spread = LowerHalfSpread(shifts);
  out.median_noise = noises.empty() ? 0 : Median(noises);
  size_t moved = 0;
  for (double s : shifts) moved += s >= floor / 2;
  out.moved_share = shifts.empty() ? 0 : static_cast<double>(moved) / static_cast<double>(shifts.size());
  out.uniform_score = out.median_shift / std::max(out.median_noise, floor / 4);
  out.uniform = out.median_shift >= floor && out.uniform_score >= 4 && out.moved_share >= 0.8;

  const double level = Quantile(during_all, 0.25), level_spread = LowerHalfSpread(during_all);
  for (auto& h : out.hosts) {
    if (h.own_baseline) {
      h.excess = h.shift - out.common_shift;
      h.score = h.excess / std::max({h.noise, out.spread, floor / 4});
      // Its own signal must rise too: a host that cooled less than the others when the
      // whole job slowed down stands out from them without having done anything.
      h.culprit = h.excess >= floor && h.shift >= floor / 2 && h.score >= kCulpritScore;
    } else {
      h.baseline = level;
      h.excess = h.during - level;
      h.score = h.excess / std::max(level_spread, floor / 4);
      h.culprit = h.excess >= 2 * floor && h.score >= kCulpritScoreNoBaseline;
    }
    h.onset = segment.t0;
    if (!h.culprit) continue;
    const double trigger = h.baseline + (h.own_baseline ? out.common_shift : 0) + h.excess / 2;
    for (const auto& p : *h.points)
      if (p.t >= segment.t0 - 2 * margin && p.v >= trigger) {
        h.onset = p.t;
        break;
      }
  }
  return out;
}

}  // namespace mt::tools
