#include <gtest/gtest.h>

#include <filesystem>

#include "exporter/kmsg_collector.h"
#include "tests/unit/exporter/temp_dir.h"
#include "tests/unit/exporter/test_util.h"

namespace mt::exporter {
namespace {

using testing::Fixture;
using testing::CollectOnce;
using testing::TempDir;

const char* kKey = "hw_dmesg_gpu_errors_total{host=\"node1\"}";

TEST(IsGpuErrorRecord, NeedsPriorityGpuWordAndErrorWord) {
  EXPECT_TRUE(IsGpuErrorRecord("3,1,1,-;amdgpu 0000:0c:00.0: amdgpu: page fault"));
  EXPECT_TRUE(IsGpuErrorRecord("4,1,1,-;[drm] ring gfx timeout"));
  EXPECT_TRUE(IsGpuErrorRecord("0,1,1,-;XGMI link FAILED"));       // case-insensitive
  EXPECT_TRUE(IsGpuErrorRecord("11,1,1,-;amdgpu: GPU reset"));      // facility 1, level 3
  EXPECT_FALSE(IsGpuErrorRecord("6,1,1,-;amdgpu: reset done"));     // info level
  EXPECT_FALSE(IsGpuErrorRecord("14,1,1,-;amdgpu: reset done"));    // facility 1, level 6
  EXPECT_FALSE(IsGpuErrorRecord("3,1,1,-;ionic: cqe with error 12"));
  EXPECT_FALSE(IsGpuErrorRecord("3,1,1,-;amdgpu: initialized"));
  EXPECT_FALSE(IsGpuErrorRecord("garbage without separator"));
  EXPECT_FALSE(IsGpuErrorRecord("x,1,1,-;amdgpu error"));
}

TEST(KmsgCollector, CountsFixtureRecords) {
  RootFs fs(Fixture("mi300x"));
  KmsgCollector c(fs);
  auto s = CollectOnce(c);
  EXPECT_EQ(s.At(kKey), 3);  // page fault (3), drm timeout (4), GPU reset (2)
  EXPECT_EQ(s.types.at("hw_dmesg_gpu_errors_total"), prometheus::MetricType::Counter);
}

TEST(KmsgCollector, CountsEachNewRecordOnceAndNeverDecreases) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "dev");
  std::filesystem::copy_file(Fixture("mi300x") + "/dev/kmsg", dir.path() / "dev/kmsg");
  RootFs fs(dir.str());
  KmsgCollector c(fs);
  EXPECT_EQ(CollectOnce(c).At(kKey), 3);
  EXPECT_EQ(CollectOnce(c).At(kKey), 3);  // nothing new: same value
  dir.Write("dev/kmsg", "3,2000,9000001,-;amdgpu 0000:8c:00.0: amdgpu: ring sdma0 timeout\n", true);
  dir.Write("dev/kmsg", "6,2001,9000002,-;amdgpu: all good\n", true);
  EXPECT_EQ(CollectOnce(c).At(kKey), 4);
  // A record written in two pieces is counted once it is complete.
  dir.Write("dev/kmsg", "3,2002,9000003,-;amdgpu: VM fa", true);
  EXPECT_EQ(CollectOnce(c).At(kKey), 4);
  dir.Write("dev/kmsg", "ult detected\n", true);
  EXPECT_EQ(CollectOnce(c).At(kKey), 5);
}

TEST(KmsgCollector, UnreadableKmsgMeansNoFamily) {
  RootFs fs(Fixture("minimal"));
  KmsgCollector c(fs);
  bool ok = false;
  auto s = CollectOnce(c, "node1", &ok);
  EXPECT_TRUE(ok);
  EXPECT_FALSE(s.HasFamily("hw_dmesg_gpu_errors_total"));
}

}  // namespace
}  // namespace mt::exporter
