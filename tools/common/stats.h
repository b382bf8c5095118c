// Descriptive statistics and the two-sample tests perf_analysis and compare_jobs use.
// Plain functions over vectors of doubles; NaN inputs are the caller's to drop.
#pragma once
#include <cstddef>
#include <vector>

namespace mt::tools {

struct StatSummary {
  size_t n = 0;
  double mean = 0, std = 0;          // sample standard deviation (n - 1)
  double p50 = 0, p99 = 0, min = 0, max = 0;
  double cv() const { return mean != 0 ? std / mean : 0; }   // jitter
};

// All zeros for an empty input.
StatSummary Summarize(const std::vector<double>& values);

// Linear-interpolated quantile (q in [0, 1]) of unsorted values; 0 for an empty input.
double Quantile(std::vector<double> values, double q);

// Median absolute deviation scaled to a normal standard deviation (× 1.4826).
double RobustStd(const std::vector<double>& values);

// Welch's t statistic of the difference of means (b - a); 0 when both are constant
// and equal, ±inf when they are constant and differ.
double WelchT(const StatSummary& a, const StatSummary& b);

// Least-squares slope of y over x (0 with fewer than two distinct x).
double Slope(const std::vector<double>& x, const std::vector<double>& y);

// `v` rounded to `digits` decimal places (answers carry no float noise); a non-finite value
// is returned as it is.
double RoundDecimals(double v, int digits);

}  // namespace mt::tools
