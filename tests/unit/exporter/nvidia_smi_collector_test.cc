#include <gtest/gtest.h>
#include <stdlib.h>

#include "exporter/nvidia_smi_collector.h"
#include "tests/unit/exporter/test_util.h"

namespace mt::exporter {
namespace {

using testing::CollectOnce;
using testing::Fixture;

const std::string kFakeSmi = Fixture("nvidia/nvidia-smi");

TEST(ParseNvidiaSmiCsv, RecordedH100LineAndUnsupportedFields) {
  std::string err;
  auto gpus = ParseNvidiaSmiCsv(
      "1, 00000000:00:0A.0, 41, 69.85, 345, 2619, 0, 81559, [N/A], [N/A]\n"
      "0, 00000000:00:09.0, 59, 631.95, 1980, 2619, 19818, 81559, 0, 0\n",
      &err);
  ASSERT_TRUE(gpus) << err;
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].pci_bus_id, "00000000:00:09.0");  // sorted by bus id
  EXPECT_EQ((*gpus)[0].power_w, 631.95);
  EXPECT_EQ((*gpus)[0].ecc_corrected, 0.0);
  EXPECT_FALSE((*gpus)[1].ecc_corrected.has_value());
  EXPECT_FALSE((*gpus)[1].ecc_uncorrected.has_value());
  EXPECT_FALSE(ParseNvidiaSmiCsv("0, 00000000:00:09.0, 59\n", &err));
  EXPECT_NE(err.find("3 columns"), std::string::npos);
}

TEST(NvidiaSmiCollector, ServesFakeNvidiaSmiReadingsUnderAmdNames) {
  NvidiaSmiCollector c(kFakeSmi, std::chrono::milliseconds(5000));
  c.PollOnce();
  auto s = CollectOnce(c);
  EXPECT_EQ(s.At(R"(hw_gpu_temperature_celsius{gpu="0",host="node1"})"), 59);
  EXPECT_EQ(s.At(R"(hw_gpu_power_watts{gpu="0",host="node1"})"), 631.95);
  EXPECT_EQ(s.At(R"(hw_gpu_power_watts{gpu="1",host="node1"})"), 69.85);
  EXPECT_EQ(s.At(R"(hw_gpu_clock_mhz{gpu="0",type="sclk",host="node1"})"), 1980);
  EXPECT_EQ(s.At(R"(hw_gpu_clock_mhz{gpu="1",type="mclk",host="node1"})"), 2619);
  EXPECT_EQ(s.At(R"(hw_gpu_vram_used_bytes{gpu="0",host="node1"})"), 19818.0 * 1048576);
  EXPECT_EQ(s.At(R"(hw_gpu_vram_total_bytes{gpu="0",host="node1"})"), 81559.0 * 1048576);
  EXPECT_EQ(s.At(R"(hw_gpu_ras_umc_ue_total{gpu="0",host="node1"})"), 0);
  EXPECT_EQ(s.types.at("hw_gpu_ras_umc_ce_total"), prometheus::MetricType::Counter);
}

TEST(NvidiaSmiCollector, NothingBeforeTheFirstReadingAndAfterFailures) {
  NvidiaSmiCollector c(kFakeSmi, std::chrono::milliseconds(5000));
  EXPECT_TRUE(CollectOnce(c).samples.empty());
  ::setenv("FAKE_NVIDIA_SMI", "nodriver", 1);
  NvidiaSmiCollector broken(kFakeSmi, std::chrono::milliseconds(5000));
  broken.PollOnce();
  bool ok = true;
  EXPECT_TRUE(CollectOnce(broken, "node1", &ok).samples.empty());
  EXPECT_FALSE(ok);
  ::unsetenv("FAKE_NVIDIA_SMI");
}

TEST(NvidiaSmiCollector, HungNvidiaSmiIsKilledAtTheInterval) {
  ::setenv("FAKE_NVIDIA_SMI", "hang", 1);
  NvidiaSmiCollector c(kFakeSmi, std::chrono::milliseconds(300));
  c.PollOnce();  // returns once the 300 ms timeout killed it
  ::unsetenv("FAKE_NVIDIA_SMI");
  EXPECT_TRUE(CollectOnce(c).samples.empty());
}

TEST(FindNvidiaSmi, AbsentBinaryMeansCollectorOff) {
  EXPECT_EQ(FindNvidiaSmi("/nonexistent/nvidia-smi"), "");
  EXPECT_EQ(FindNvidiaSmi("definitely-not-a-binary-xyz"), "");
  EXPECT_EQ(FindNvidiaSmi(kFakeSmi), kFakeSmi);
}

}  // namespace
}  // namespace mt::exporter
