// Prometheus query results as plain series, their per-series statistics, and robust
// outlier scoring across series. This is what turns a multi-megabyte matrix into the few
// numbers an agent needs: min/mean/max/last per series, a ranking, the outliers.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "mcp/json.h"

namespace mt::tools {

struct TsdbPoint {
  double t = 0;   // seconds since the epoch
  double v = 0;
};

struct TsdbSeries {
  std::map<std::string, std::string> labels;   // including __name__ when present
  std::vector<TsdbPoint> points;               // ascending t; one point for an instant vector

  std::string label(const std::string& name) const;
};

// Parses the `data` of /api/v1/query or /query_range (vector, matrix or scalar). NaN and
// ±Inf samples are dropped. Throws std::runtime_error on an unknown shape.
std::vector<TsdbSeries> ParseQueryData(const Json& data);

struct SeriesStats {
  int n = 0;
  double min = 0, mean = 0, max = 0, first = 0, last = 0;
  double t_min = 0, t_max = 0;   // times of the min and max
  double t_first = 0, t_last = 0;
};
SeriesStats Stats(const TsdbSeries& s);

// `name{host="a",gpu="1"}` with the labels in a stable order; job/instance dropped.
std::string SeriesKey(const TsdbSeries& s);

// Robust deviation of each value from the median of all values, in units of the scaled
// median absolute deviation (floored so that a flat population still gives finite scores:
// 2 % of |median|, or 0.1 % of the largest magnitude, or `abs_floor`).
std::vector<double> RobustScores(const std::vector<double>& values, double abs_floor = 1e-9);
double Median(std::vector<double> values);

// Rounds to `digits` significant digits (compact JSON for the agent).
double Round(double v, int digits = 4);

// Range step for a window: the skill's 30 s / 60 s / 300 s by length, raised so that no
// series exceeds `max_points` points (Prometheus itself refuses > 11,000).
double ChooseStep(double window_seconds, double requested = 0, int max_points = 11000);

}  // namespace mt::tools
