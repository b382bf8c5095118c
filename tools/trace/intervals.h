// Time intervals [a, b] in µs and the three set measures the step decomposition needs:
// the length of a union (touching intervals merge), of an intersection, of a difference.
#pragma once
#include <utility>
#include <vector>

namespace mt::tools::trace {

using Interval = std::pair<double, double>;
using IntervalSet = std::vector<Interval>;   // merged: sorted, disjoint, non-touching

// Sorts and merges `spans` (any order, overlaps allowed) into an IntervalSet.
IntervalSet Union(std::vector<Interval> spans);
// Merges two IntervalSets.
IntervalSet Union(const IntervalSet& a, const IntervalSet& b);
double Length(const IntervalSet& u);
double IntersectionLength(const IntervalSet& u, const IntervalSet& v);
// |u minus v|
double DifferenceLength(const IntervalSet& u, const IntervalSet& v);

}  // namespace mt::tools::trace
