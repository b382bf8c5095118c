#include "tools/trace/intervals.h"

#include <algorithm>

namespace mt::tools::trace {

IntervalSet Union(std::vector<Interval> spans) {
  std::sort(spans.begin(), spans.end());
  IntervalSet out;
  for (const auto& [a, b] : spans) {
    if (!out.empty() && a <= out.back().second) {
      out.back().second = std::max(out.back().second, b);
    } else {
      out.emplace_back(a, b);
    }
  }
  return out;
}

IntervalSet Union(const IntervalSet& a, const IntervalSet& b) {
  std::vector<Interval> all(a);
  all.insert(all.end(), b.begin(), b.end());
  return Union(std::move(all));
}

double Length(const IntervalSet& u) {
  double total = 0;
  for (const auto& [a, b] : u) total += b - a;
  return total;
}

double IntersectionLength(const IntervalSet& u, const IntervalSet& v) {
  size_t i = 0, j = 0;
  double total = 0;
  while (i < u.size() && j < v.size()) {
    double a = std::max(u[i].first, v[j].first);
    double b = std::min(u[i].second, v[j].second);
    if (b > a) total += b - a;
    if (u[i].second < v[j].second) ++i;
    else ++j;
  }
  return total;
}

double DifferenceLength(const IntervalSet& u, const IntervalSet& v) {
  return Length(u) - IntersectionLength(u, v);
}

}  // namespace mt::tools::trace
