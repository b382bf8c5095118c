#include "tools/common/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace mt::tools {
namespace {

TEST(Stats, SummaryOfKnownValues) {
  StatSummary s = Summarize({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  EXPECT_EQ(s.n, 10u);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_NEAR(s.std, 3.02765, 1e-5);   // sample std (n - 1)
  EXPECT_DOUBLE_EQ(s.p50, 5.5);
  EXPECT_NEAR(s.p99, 9.91, 1e-9);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
}

TEST(Stats, EmptyAndSingle) {
  StatSummary e = Summarize({});
  EXPECT_EQ(e.n, 0u);
  EXPECT_EQ(e.mean, 0);
  StatSummary one = Summarize({42});
  EXPECT_EQ(one.std, 0);
  EXPECT_EQ(one.p99, 42);
  EXPECT_EQ(Quantile({}, 0.5), 0);
  EXPECT_EQ(RobustStd({7}), 0);
}

TEST(Stats, RobustStdIgnoresOutliers) {
  std::mt19937 rng(1);
  std::normal_distribution<double> n(100, 2);
  std::vector<double> v;
  for (int i = 0; i < 2000; ++i) v.push_back(n(rng));
  double clean = RobustStd(v);
  EXPECT_NEAR(clean, 2, 0.15);
  for (int i = 0; i < 50; ++i) v.push_back(1e6);
  EXPECT_NEAR(RobustStd(v), clean, 0.2);
  EXPECT_GT(Summarize(v).std, 1000);
}

TEST(Stats, WelchT) {
  StatSummary a = Summarize({10, 11, 9, 10, 10});
  StatSummary b = Summarize({20, 21, 19, 20, 20});
  EXPECT_GT(WelchT(a, b), 10);
  EXPECT_LT(WelchT(b, a), -10);
  StatSummary c = Summarize({5, 5, 5}), d = Summarize({5, 5, 5}), e = Summarize({6, 6, 6});
  EXPECT_EQ(WelchT(c, d), 0);
  EXPECT_TRUE(std::isinf(WelchT(c, e)));
}

TEST(Stats, Slope) {
  EXPECT_NEAR(Slope({0, 1, 2, 3}, {1, 3, 5, 7}), 2, 1e-12);
  EXPECT_EQ(Slope({1, 1}, {1, 2}), 0);
  EXPECT_EQ(Slope({1}, {1}), 0);
}

}  // namespace
}  // namespace mt::tools
