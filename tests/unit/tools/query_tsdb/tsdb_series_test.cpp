// Parsing Prometheus answers, per-series statistics, robust outlier scores, step choice.
#include <gtest/gtest.h>

#include <cmath>

#include "tools/tsdb/tsdb_context.h"
#include "tools/tsdb/tsdb_series.h"

namespace mt::tools {
namespace {

TEST(TsdbSeries, ParsesVectorMatrixAndScalarAndDropsNaN) {
  Json vec = Json::parse(R"({"resultType":"vector","result":[{"metric":{"__name__":"x","host":"a"},"value":[10,"1.5"]},
                                                                {"metric":{"host":"b"},"value":[10,"NaN"]}]})");
  auto v = ParseQueryData(vec);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].label("host"), "a");
  ASSERT_EQ(v[0].points.size(), 1u);
  EXPECT_DOUBLE_EQ(v[0].points[0].v, 1.5);
  EXPECT_TRUE(v[1].points.empty());   // NaN dropped

  Json mat = Json::parse(R"({"resultType":"matrix","result":[{"metric":{"host":"a","gpu":"1","job":"j"},
                              "values":[[1,"3"],[2,"1"],[3,"+Inf"],[4,"5"]]}]})");
  auto m = ParseQueryData(mat);
  ASSERT_EQ(m.size(), 1u);
  ASSERT_EQ(m[0].points.size(), 3u);
  SeriesStats st = Stats(m[0]);
  EXPECT_EQ(st.n, 3);
  EXPECT_DOUBLE_EQ(st.min, 1);
  EXPECT_DOUBLE_EQ(st.max, 5);
  EXPECT_DOUBLE_EQ(st.mean, 3);
  EXPECT_DOUBLE_EQ(st.last, 5);
  EXPECT_DOUBLE_EQ(st.t_min, 2);
  EXPECT_EQ(SeriesKey(m[0]), "{gpu=\"1\",host=\"a\"}");

  auto s = ParseQueryData(Json::parse(R"({"resultType":"scalar","result":[7,"42"]})"));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_DOUBLE_EQ(s[0].points.at(0).v, 42);

  EXPECT_THROW(ParseQueryData(Json::parse(R"({"resultType":"string","result":[1,"x"]})")), std::runtime_error);
}

TEST(TsdbSeries, RobustScoresSingleOutOnlyTheOutlier) {
  std::vector<double> power(23, 900.0);
  for (size_t i = 0; i < power.size(); ++i) power[i] += static_cast<double>(i % 3);   // small spread
  power.push_back(300.0);
  auto sc = RobustScores(power);
  for (size_t i = 0; i + 1 < sc.size(); ++i) EXPECT_LT(std::fabs(sc[i]), 3.5) << i;
  EXPECT_LT(sc.back(), -3.5);

  // A population that is zero almost everywhere (retransmits): finite, huge score.
  std::vector<double> retx(20, 0.0);
  retx.push_back(3000);
  auto r = RobustScores(retx);
  EXPECT_TRUE(std::isfinite(r.back()));
  EXPECT_GT(r.back(), 100);
  EXPECT_DOUBLE_EQ(r.front(), 0);
}

TEST(TsdbSeries, StepKeepsEverySeriesUnder11000Points) {
  EXPECT_EQ(ChooseStep(3600), 30);
  EXPECT_EQ(ChooseStep(12 * 3600), 60);
  EXPECT_EQ(ChooseStep(35 * 3600), 300);
  for (double window : {60.0, 3600.0, 35 * 3600.0, 30 * 86400.0, 400 * 86400.0}) {
    double step = ChooseStep(window, 1);
    EXPECT_LE(window / step + 1, 11001) << window;
  }
  EXPECT_EQ(ChooseStep(600, 15), 15);    // a requested step that fits is kept
}

TEST(TsdbSeries, FormattingHelpers) {
  EXPECT_EQ(PromDuration(0.2), "1s");
  EXPECT_EQ(PromDuration(900), "900s");
  EXPECT_EQ(IsoTime(1771960860), "2026-02-24T19:21:00Z");
  EXPECT_EQ(Num(299.96), "300");
  EXPECT_EQ(Num(0.1234567), "0.1235");
  EXPECT_DOUBLE_EQ(Round(123456.0, 4), 123500.0);
  EXPECT_EQ(HostRegex({"chi2822", "a.b"}), "chi2822|a\\\\.b");
}

}  // namespace
}  // namespace mt::tools
