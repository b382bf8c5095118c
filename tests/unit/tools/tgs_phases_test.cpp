#include "tools/common/tgs_phases.h"

#include <gtest/gtest.h>

#include <random>

namespace mt::tools {
namespace {

std::vector<TgsPoint> Series(int n, double (*f)(int), unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(-10, 10);
  std::vector<TgsPoint> v;
  for (int s = 0; s < n; ++s) v.push_back({s, f(s) + noise(rng)});
  return v;
}

TEST(TgsPhases, StableRunIsOnePhase) {
  auto a = AnalyzeTgs(Series(300, [](int s) { return s < 3 ? 500.0 : 3290.0; }));
  ASSERT_EQ(a.phases.size(), 1u);
  EXPECT_EQ(a.pattern, "stable");
  EXPECT_EQ(a.phases[0].start_step, 0);   // warm-up belongs to the first phase's range
  EXPECT_NEAR(a.phases[0].mean, 3290, 3);
  EXPECT_FALSE(a.degraded);
}

TEST(TgsPhases, PeriodicCheckpointSpikesDoNotSplit) {
  auto a = AnalyzeTgs(Series(400, [](int s) { return s % 50 == 25 ? 900.0 : 3290.0; }));
  EXPECT_EQ(a.phases.size(), 1u);
  EXPECT_EQ(a.spikes.size(), 8u);
}

TEST(TgsPhases, ConstantDropIsTwoPhasesAndDegraded) {
  auto a = AnalyzeTgs(Series(300, [](int s) { return s < 150 ? 3290.0 : 2600.0; }));
  ASSERT_EQ(a.phases.size(), 2u);
  EXPECT_EQ(a.phases[1].start_step, 150);
  EXPECT_EQ(a.pattern, "constant_drop");
  EXPECT_TRUE(a.degraded);
  EXPECT_NEAR(a.degradation_pct, 21, 1);
}

TEST(TgsPhases, TemporaryDipIsOneTime) {
  auto a = AnalyzeTgs(Series(300, [](int s) { return s >= 100 && s < 140 ? 2500.0 : 3290.0; }));
  ASSERT_EQ(a.phases.size(), 3u);
  EXPECT_EQ(a.pattern, "one_time");
  EXPECT_FALSE(a.degraded);
}

TEST(TgsPhases, TooFewPoints) {
  auto a = AnalyzeTgs({{0, 1}, {1, 2}});
  EXPECT_EQ(a.pattern, "insufficient_data");
  ASSERT_EQ(a.phases.size(), 1u);
  EXPECT_TRUE(AnalyzeTgs({}).phases.empty());
}

}  // namespace
}  // namespace mt::tools
