// The straggler and the trace diff on real torch.profiler traces (tests/traces/recorded:
// DDP over gloo on 3 ranks, Debian's torch 1.13; rank 1 slowed by 200 ms of extra matmuls
// a step, or by a 200 ms sleep; and a run with nobody slowed).
#include <gtest/gtest.h>

#include <filesystem>

#include "tools/trace/chrome_trace_reader.h"
#include "tools/trace/rank_comparison.h"
#include "tools/trace/trace_diff.h"

namespace fs = std::filesystem;
namespace tr = mt::tools::trace;

namespace {

std::vector<tr::TraceAnalysis> LoadRun(const std::string& run) {
  std::vector<tr::TraceAnalysis> out;
  for (int r = 0; r < 3; ++r) {
    fs::path p = fs::path(MT_TRACES_DIR) / "recorded" / run / ("rank" + std::to_string(r) + ".pt.trace.json.gz");
    auto t = tr::ReadChromeTrace(p.string());
    EXPECT_TRUE(t.ok()) << t.message();
    if (t.ok()) out.push_back(tr::AnalyseTrace(*t, p.filename().string()));
  }
  return out;
}

TEST(RankComparison, NamesTheSlowedRank) {
  for (const char* run : {"slow1", "slow1_sleep"}) {
    tr::RankComparison c = tr::CompareRanks(LoadRun(run));
    EXPECT_EQ(c.verdict, "straggler") << run << ": " << c.why;
    EXPECT_EQ(c.straggler, 1) << run;
    EXPECT_GT(c.others_exposed_comm_share, 0.5) << run;
    EXPECT_EQ(c.ranks[1].rank_source, "file name");
  }
}

TEST(RankComparison, NoStragglerWhenNobodyIsSlowed) {
  tr::RankComparison c = tr::CompareRanks(LoadRun("none"));
  EXPECT_EQ(c.verdict, "balanced") << c.why;
  EXPECT_FALSE(c.straggler.has_value());
}

TEST(RankComparison, OneRankIsUnknown) {
  auto all = LoadRun("slow1");
  tr::RankComparison c = tr::CompareRanks({all[0]});
  EXPECT_EQ(c.verdict, "unknown");
}

TEST(TraceDiff, ExposedCommunicationRisesOnTheWaitingRanks) {
  auto base = LoadRun("none"), test = LoadRun("slow1");
  for (int r : {0, 2}) {
    tr::TraceDiff d = tr::DiffTraces(base[static_cast<size_t>(r)], test[static_cast<size_t>(r)]);
    const tr::CategoryDelta& exposed = d.categories[3];
    ASSERT_EQ(exposed.category, "exposed_comm");
    EXPECT_GT(*exposed.test_share, *exposed.base_share + 0.25) << "rank " << r;
    EXPECT_NE(d.summary.find("exposed_comm"), std::string::npos) << d.summary;
  }
  tr::TraceDiff slowed = tr::DiffTraces(base[1], test[1]);
  EXPECT_EQ(slowed.ops.front().name, "slow_rank_extra_compute") << slowed.summary;
  EXPECT_NE(slowed.summary.find("compute"), std::string::npos) << slowed.summary;
}

}  // namespace
