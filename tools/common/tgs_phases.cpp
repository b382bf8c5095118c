#include "tools/common/tgs_phases.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mt::tools {
namespace {

constexpr size_t kWarmup = 5;
constexpr size_t kSteadyWindow = 10;
constexpr size_t kTailWindow = 10;
constexpr size_t kMinSegment = 5;
constexpr double kMergeBelowPct = 3.0;
constexpr size_t kMaxPhases = 12;

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end());
  double m = v[mid];
  if (v.size() % 2 == 0) {
    double lo = *std::max_element(v.begin(), v.begin() + static_cast<long>(mid));
    m = (m + lo) / 2;
  }
  return m;
}

struct Prefix {
  std::vector<double> s, s2;
  explicit Prefix(const std::vector<double>& x) : s(x.size() + 1, 0), s2(x.size() + 1, 0) {
    for (size_t i = 0; i < x.size(); ++i) {
      s[i + 1] = s[i] + x[i];
      s2[i + 1] = s2[i] + x[i] * x[i];
    }
  }
  // Sum of squared deviations from the mean over [a, b).
  double Cost(size_t a, size_t b) const {
    double n = static_cast<double>(b - a);
    if (n <= 0) return 0;
    double sum = s[b] - s[a];
    return std::max(0.0, (s2[b] - s2[a]) - sum * sum / n);
  }
  double Mean(size_t a, size_t b) const { return (s[b] - s[a]) / static_cast<double>(b - a); }
};

// Split points (indices where a new segment starts) by recursive binary segmentation.
void Segment(const Prefix& p, size_t a, size_t b, double penalty, std::vector<size_t>* cuts, int depth) {
  if (b - a < 2 * kMinSegment || depth > 20) return;
  double whole = p.Cost(a, b);
  double best_gain = 0;
  size_t best = 0;
  for (size_t k = a + kMinSegment; k + kMinSegment <= b; ++k) {
    double gain = whole - p.Cost(a, k) - p.Cost(k, b);
    if (gain > best_gain) {
      best_gain = gain;
      best = k;
    }
  }
  if (best == 0 || best_gain <= penalty) return;
  Segment(p, a, best, penalty, cuts, depth + 1);
  cuts->push_back(best);
  Segment(p, best, b, penalty, cuts, depth + 1);
}

using Segments = std::vector<std::pair<size_t, size_t>>;

// A phase of the points too few to analyse: all of them.
TgsPhase WholeSeries(const std::vector<TgsPoint>& points) {
  TgsPhase ph;
  ph.start_step = points.front().step;
  ph.end_step = points.back().step;
  ph.steps = points.size();
  double sum = 0;
  for (auto& p : points) sum += p.tgs;
  ph.mean = sum / static_cast<double>(points.size());
  return ph;
}

// Hampel filter: isolated spikes become the local median. Returns the filtered series
// and appends the steps of the spikes to `spikes`.
std::vector<double> HampelFilter(const std::vector<double>& x, const std::vector<int64_t>& steps,
                                 std::vector<int64_t>* spikes) {
  const size_t n = x.size();
  std::vector<double> f = x;
  std::vector<double> diffs;
  for (size_t i = 1; i < n; ++i) diffs.push_back(std::abs(x[i] - x[i - 1]));
  double noise = Median(diffs) / 0.6745 / std::sqrt(2.0);   // robust sigma of one point
  double floor = 0.005 * Median(x);
  for (size_t i = 0; i < n; ++i) {
    size_t lo = i >= 3 ? i - 3 : 0, hi = std::min(n, i + 4);
    // Window of at most 7: median and MAD by insertion sort, no allocation.
    double w[7], dev[7];
    size_t k = 0;
    for (size_t j = lo; j < hi; ++j) w[k++] = x[j];
    std::sort(w, w + k);
    double med = k % 2 ? w[k / 2] : (w[k / 2 - 1] + w[k / 2]) / 2;
    for (size_t j = 0; j < k; ++j) dev[j] = std::abs(w[j] - med);
    std::sort(dev, dev + k);
    double mad = 1.4826 * (k % 2 ? dev[k / 2] : (dev[k / 2 - 1] + dev[k / 2]) / 2);
    double scale = std::max({mad, noise, floor});
    if (std::abs(x[i] - med) > 4 * scale && std::abs(x[i] - med) > 0.03 * std::abs(med)) {
      // A genuine level shift has neighbours on both sides agreeing with one of them;
      // a spike disagrees with both.
      bool left_agrees = i > 0 && std::abs(x[i - 1] - x[i]) <= 4 * std::max(noise, floor);
      bool right_agrees = i + 1 < n && std::abs(x[i + 1] - x[i]) <= 4 * std::max(noise, floor);
      if (!left_agrees && !right_agrees) {
        f[i] = med;
        spikes->push_back(steps[i]);
      }
    }
  }
  return f;
}

// Noise from the filtered series' point-to-point differences.
double NoiseSigma(const std::vector<double>& f) {
  const size_t n = f.size();
  std::vector<double> d;
  for (size_t i = 1; i < n; ++i) d.push_back(std::abs(f[i] - f[i - 1]));
  double sigma = Median(d) / 0.6745 / std::sqrt(2.0);
  sigma = std::max(sigma, 1e-3 * std::max(1.0, std::abs(Median(f))));
  return sigma;
}

// Segments between the change points binary segmentation finds in [0, n).
Segments FindSegments(const Prefix& pre, size_t n, double sigma) {
  std::vector<size_t> cuts;
  double penalty = 3.0 * sigma * sigma * std::log(static_cast<double>(n));
  Segment(pre, 0, n, penalty, &cuts, 0);
  std::sort(cuts.begin(), cuts.end());
  Segments segs;
  size_t start = 0;
  for (size_t c : cuts) {
    segs.emplace_back(start, c);
    start = c;
  }
  segs.emplace_back(start, n);
  return segs;
}

// Merge neighbours closer than kMergeBelowPct, smallest gap first (and more than
// kMaxPhases whatever their gap).
void MergeCloseSegments(const Prefix& pre, Segments& segs) {
  auto rel_gap = [&](size_t i) {
    double a = pre.Mean(segs[i].first, segs[i].second), b = pre.Mean(segs[i + 1].first, segs[i + 1].second);
    return std::abs(b - a) / std::max(1e-9, std::abs(a)) * 100;
  };
  while (segs.size() > 1) {
    size_t best = 0;
    double gap = rel_gap(0);
    for (size_t i = 1; i + 1 < segs.size(); ++i)
      if (rel_gap(i) < gap) {
        gap = rel_gap(i);
        best = i;
      }
    if (gap >= kMergeBelowPct && segs.size() <= kMaxPhases) break;
    segs[best].second = segs[best + 1].second;
    segs.erase(segs.begin() + static_cast<long>(best) + 1);
  }
}

void AddPhases(const Segments& segs, const Prefix& pre, int64_t first_step, const std::vector<int64_t>& steps,
               TgsAnalysis& out) {
  for (size_t i = 0; i < segs.size(); ++i) {
    auto [a, b] = segs[i];
    TgsPhase ph;
    ph.start_step = i == 0 ? first_step : steps[a];
    ph.end_step = steps[b - 1];
    ph.steps = b - a;
    ph.mean = pre.Mean(a, b);
    ph.std = std::sqrt(pre.Cost(a, b) / static_cast<double>(b - a));
    if (i > 0) ph.change_pct = (ph.mean - out.phases.back().mean) / out.phases.back().mean * 100;
    out.phases.push_back(ph);
  }
}

// Onset of the first decline: walk back from the end of the first phase while the
// local median (window 5) stays below the phase's early baseline by more than the noise.
int64_t DeclineOnset(const std::vector<double>& f, std::pair<size_t, size_t> first_seg, double sigma,
                     const std::vector<int64_t>& steps) {
  const size_t n = f.size();
  auto [a, b] = first_seg;
  std::vector<double> early(f.begin() + static_cast<long>(a), f.begin() + static_cast<long>(a + (b - a) / 2 + 1));
  double baseline = Median(early);
  double thr = baseline - std::max(3 * sigma, 0.005 * std::abs(baseline));
  auto local = [&](size_t i) {
    double w[5];
    size_t k = 0;
    for (size_t j = i >= 2 ? i - 2 : 0; j < std::min(n, i + 3); ++j) w[k++] = f[j];
    std::sort(w, w + k);
    return w[k / 2];
  };
  size_t j = b;
  while (j > a && local(j - 1) < thr) --j;
  return j < b ? steps[j] : steps[b < n ? b : n - 1];
}

// Early steady window and tail (skill: steps 5-15 vs the last 10), on raw values.
void SteadyAndTail(const std::vector<double>& x, TgsAnalysis& out) {
  const size_t n = x.size();
  size_t sw = std::min(kSteadyWindow, n);
  out.steady_mean = std::accumulate(x.begin(), x.begin() + static_cast<long>(sw), 0.0) / static_cast<double>(sw);
  size_t tw = std::min(kTailWindow, n);
  out.tail_mean = std::accumulate(x.end() - static_cast<long>(tw), x.end(), 0.0) / static_cast<double>(tw);
  if (out.steady_mean > 0) out.degradation_pct = (out.steady_mean - out.tail_mean) / out.steady_mean * 100;
  out.degraded = out.degradation_pct > 10.0;
}

// Shape.
std::string Pattern(const std::vector<TgsPhase>& ph) {
  if (ph.size() == 1) return "stable";
  bool monotone_down = true, monotone_up = true;
  for (size_t i = 1; i < ph.size(); ++i) {
    if (ph[i].mean >= ph[i - 1].mean) monotone_down = false;
    if (ph[i].mean <= ph[i - 1].mean) monotone_up = false;
  }
  double first = ph.front().mean, last = ph.back().mean;
  if (monotone_up) return "improved";
  if (monotone_down && ph.size() == 2) return "constant_drop";
  if (monotone_down) return "gradual";
  if (std::abs(last - first) / first * 100 < kMergeBelowPct) return "one_time";
  return "phased";
}

}  // namespace

TgsAnalysis AnalyzeTgs(std::vector<TgsPoint> points) {
  TgsAnalysis out;
  points.erase(std::remove_if(points.begin(), points.end(),
                              [](const TgsPoint& p) { return !(p.tgs >= 0) || !std::isfinite(p.tgs); }),
               points.end());
  std::sort(points.begin(), points.end(), [](const TgsPoint& a, const TgsPoint& b) { return a.step < b.step; });
  out.points = points.size();
  if (points.size() < kWarmup + kMinSegment) {
    out.pattern = "insufficient_data";
    if (!points.empty()) out.phases.push_back(WholeSeries(points));
    return out;
  }
  out.warmup_steps = kWarmup;
  std::vector<double> x;
  std::vector<int64_t> steps;
  for (size_t i = kWarmup; i < points.size(); ++i) {
    x.push_back(points[i].tgs);
    steps.push_back(points[i].step);
  }
  const size_t n = x.size();
  const std::vector<double> f = HampelFilter(x, steps, &out.spikes);
  const double sigma = NoiseSigma(f);
  Prefix pre(f);
  Segments segs = FindSegments(pre, n, sigma);
  MergeCloseSegments(pre, segs);
  AddPhases(segs, pre, points.front().step, steps, out);
  if (out.phases.size() >= 2 && out.phases[1].mean < out.phases[0].mean)
    out.decline_onset_step = DeclineOnset(f, segs[0], sigma, steps);
  SteadyAndTail(x, out);
  out.pattern = Pattern(out.phases);
  return out;
}

}  // namespace mt::tools
