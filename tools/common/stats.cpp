#include "tools/common/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mt::tools {

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, v.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

StatSummary Summarize(const std::vector<double>& v) {
  StatSummary s;
  s.n = v.size();
  if (v.empty()) return s;
  double sum = 0;
  s.min = s.max = v[0];
  for (double x : v) {
    sum += x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  s.mean = sum / static_cast<double>(v.size());
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.std = std::sqrt(ss / static_cast<double>(v.size() - 1));
  }
  std::vector<double> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  auto q = [&](double p) {
    double pos = p * static_cast<double>(sorted.size() - 1);
    size_t lo = static_cast<size_t>(std::floor(pos));
    size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
  };
  s.p50 = q(0.5);
  s.p99 = q(0.99);
  return s;
}

double RobustStd(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double med = Quantile(v, 0.5);
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - med));
  return 1.4826 * Quantile(std::move(dev), 0.5);
}

double WelchT(const StatSummary& a, const StatSummary& b) {
  if (a.n == 0 || b.n == 0) return 0;
  double va = a.n > 1 ? a.std * a.std / static_cast<double>(a.n) : 0;
  double vb = b.n > 1 ? b.std * b.std / static_cast<double>(b.n) : 0;
  double d = b.mean - a.mean;
  if (va + vb == 0) return d == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), d);
  return d / std::sqrt(va + vb);
}

double Slope(const std::vector<double>& x, const std::vector<double>& y) {
  size_t n = std::min(x.size(), y.size());
  if (n < 2) return 0;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  return sxx > 0 ? sxy / sxx : 0;
}

double RoundDecimals(double v, int digits) {
  if (!std::isfinite(v)) return v;
  const double f = std::pow(10.0, digits);
  return std::round(v * f) / f;
}

}  // namespace mt::tools
