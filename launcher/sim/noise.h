// Deterministic noise: a pure function of (seed, stream, index), so any sample of any
// series can be computed on its own, in any order, and always comes out the same.
#pragma once

#include <cstdint>
#include <string_view>

namespace mt::launch::sim {

inline uint64_t Mix64(uint64_t x) {  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

inline uint64_t HashString(std::string_view s) {  // FNV-1a, for naming noise streams
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Uniform in [0, 1).
inline double Uniform(uint64_t seed, uint64_t stream, uint64_t index) {
  return static_cast<double>(Mix64(Mix64(seed ^ Mix64(stream)) + index) >> 11) * 0x1.0p-53;
}

// Uniform in [-1, 1).
inline double Symmetric(uint64_t seed, uint64_t stream, uint64_t index) {
  return 2.0 * Uniform(seed, stream, index) - 1.0;
}

}  // namespace mt::launch::sim
