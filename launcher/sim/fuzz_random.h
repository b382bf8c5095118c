// The scenario generator's source of choices: a counter-based stream over Mix64, so a seed
// gives the same draws on every platform and standard library (std:: distributions do not).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "launcher/sim/noise.h"

namespace mt::launch::sim {

class FuzzRng {
 public:
  explicit FuzzRng(uint64_t seed) : seed_(Mix64(seed ^ 0x5eedF022ull)) {}
  double U() { return static_cast<double>(Mix64(seed_ + ++n_) >> 11) * 0x1.0p-53; }   // [0, 1)
  double U(double lo, double hi) { return lo + (hi - lo) * U(); }
  int64_t Int(int64_t lo, int64_t hi) {   // [lo, hi]
    return lo + static_cast<int64_t>(U() * static_cast<double>(hi - lo + 1));
  }
  bool Chance(double p) { return U() < p; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) { return v[static_cast<size_t>(Int(0, static_cast<int64_t>(v.size()) - 1))]; }
  // k distinct indices from [lo, n), in ascending order.
  std::vector<int> Distinct(int k, int lo, int n) {
    std::vector<int> all;
    for (int i = lo; i < n; ++i) all.push_back(i);
    std::vector<int> out;
    for (int i = 0; i < k && !all.empty(); ++i) {
      const size_t j = static_cast<size_t>(Int(0, static_cast<int64_t>(all.size()) - 1));
      out.push_back(all[j]);
      all.erase(all.begin() + static_cast<std::ptrdiff_t>(j));
    }
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  uint64_t seed_;
  uint64_t n_ = 0;
};

// `n` host names in one of several naming schemes (chi2818, node017, gpu-a07-03, nid001234,
// mi355x-r12n05), numbered with random gaps as real allocations are. Returns the scheme.
std::string FuzzHostNames(FuzzRng& r, int n, std::vector<std::string>* hosts);

}  // namespace mt::launch::sim
