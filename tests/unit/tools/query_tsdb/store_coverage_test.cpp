// StoreCoverage: whether a store holds a job's samples, read from `up` samples of any value
// by a real Prometheus over blocks written by the real promtool. A host with a hole, a host
// whose samples end (no failed scrape on record), a host that died with its failed scrapes
// recorded (`up` 0: not a gap), and a window that runs past the store's newest sample.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/tools/query_tsdb/exposition_store.h"
#include "tools/tsdb/prometheus_client.h"
#include "tools/tsdb/store_coverage.h"
#include "tools/tsdb/tsdb_context.h"
#include "tools/tsdb/tsdb_manager.h"

namespace mt::tools {
namespace {
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr long kT0 = testing::kStart, kT1 = testing::kStart + 3600;

// One hour at 15 s, two targets per host (mt's own names: `up` and hw_gpu_power_watts with
// `host`). "steady" reports throughout; "holey" loses every sample of both targets from
// 20 to 30 min; "ended" has no sample after 40 min; "dead" fails its scrapes from 40 min
// (`up` 0 written, as Prometheus does) and loses its GPU series; "sparse" has one target
// scraped every 60 s (holes between its samples are its rhythm, not gaps).
std::string Exposition() {
  std::string o = "# TYPE up gauge\n";
  for (long t = kT0; t <= kT1; t += 15)
    for (const char* h : {"steady", "holey", "ended", "dead"})
      for (const char* job : {"node", "gpu"}) {
        const std::string host = h;
        const long m = t - kT0;
        if (host == "holey" && m > 1200 && m < 1800) continue;
        if (host == "ended" && m > 2400) continue;
        const int up = host == "dead" && m > 2400 ? 0 : 1;
        o += "up{host=\"" + host + "\",job=\"" + job + "\"} " + std::to_string(up) + " " + std::to_string(t) + "\n";
      }
  for (long t = kT0; t <= kT1; t += 60) o += "up{host=\"sparse\",job=\"node\"} 1 " + std::to_string(t) + "\n";
  o += "# TYPE hw_gpu_power_watts gauge\n";
  for (long t = kT0; t <= kT1; t += 15)
    for (const char* h : {"steady", "holey", "ended", "dead"}) {
      const std::string host = h;
      const long m = t - kT0;
      if ((host == "holey" && m > 1200 && m < 1800) || (host != "steady" && host != "holey" && m > 2400)) continue;
      o += "hw_gpu_power_watts{host=\"" + host + "\",gpu=\"0\"} 700 " + std::to_string(t) + "\n";
    }
  return o + "# EOF\n";
}

class StoreCoverageTest : public testing::ExpositionStoreTest {
 protected:
  void SetUp() override { ASSERT_EQ(MakeStore("coverage", Exposition()), ""); }
  // Coverage over [kT0, end] as attribution reads it (15 s scrapes).
  StoreCoverage Read(double end, std::vector<std::string> only = {}) {
    TsdbManager manager(opts_);
    TsdbLease lease = manager.Acquire({tsdb_, false, std::nullopt});
    PrometheusClient client(lease.url());
    TsdbContext ctx(client, {static_cast<double>(kT0), end}, nullptr);
    if (!only.empty()) ctx.RestrictHosts(only);
    return ReadCoverage(ctx, 15);
  }
};

TEST_F(StoreCoverageTest, HolesAndEndedSamplesAreGapsButFailedScrapesAreNot) {
  const StoreCoverage c = Read(kT1);
  EXPECT_EQ(c.verdict(), "gappy");
  EXPECT_FALSE(c.stale);
  EXPECT_NEAR(c.data_end, kT1, 15);
  ASSERT_EQ(c.gaps.size(), 1u);
  EXPECT_EQ(c.gaps[0].host, "holey");
  // 10 minutes without a sample, measured at the 15 s step to within two steps
  EXPECT_NEAR(c.gaps[0].missing_s, 600, 30);
  EXPECT_NEAR(c.gaps[0].end - c.gaps[0].start, 600, 30);
  EXPECT_NEAR(c.gaps[0].start, kT0 + 1200, 30);
  EXPECT_THAT(c.ended, ElementsAre("ended"));   // "dead" has its `up` 0 samples to the end
  EXPECT_NEAR(c.samples_end.at("ended"), kT0 + 2400, 30);
  EXPECT_DOUBLE_EQ(c.samples_end.at("dead"), kT1);
  EXPECT_THAT(c.Describe({static_cast<double>(kT0), static_cast<double>(kT1)}),
              AllOf(HasSubstr("ended end, `up` included"), HasSubstr("on holey from"), HasSubstr("10 min")));
}

TEST_F(StoreCoverageTest, AWindowPastTheNewestSampleIsStale) {
  const StoreCoverage c = Read(kT1 + 1800, {"steady", "dead"});
  EXPECT_TRUE(c.stale);
  EXPECT_EQ(c.verdict(), "stale");
  EXPECT_NEAR(c.data_end, kT1, 15);
  EXPECT_THAT(c.gaps, IsEmpty());
  EXPECT_THAT(c.Describe({static_cast<double>(kT0), static_cast<double>(kT1 + 1800)}),
              HasSubstr("30 min before the window's end"));
}

TEST_F(StoreCoverageTest, OnlyTheJobsHostsAreJudged) {
  const StoreCoverage c = Read(kT1, {"steady", "dead", "sparse"});
  EXPECT_EQ(c.verdict(), "complete");
  EXPECT_NEAR(c.samples_end.at("sparse"), kT1, 15);
  EXPECT_EQ(c.Describe({static_cast<double>(kT0), static_cast<double>(kT1)}), "");
}

}  // namespace
}  // namespace mt::tools
