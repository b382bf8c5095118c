#include <gtest/gtest.h>

#include "exporter/amdgpu_collector.h"
#include "tests/unit/exporter/test_util.h"

namespace mt::exporter {
namespace {

using testing::Fixture;
using testing::CollectOnce;

TEST(AmdGpuCollector, NumbersGpusInPciOrderAndIgnoresOtherHwmon) {
  RootFs fs(Fixture("mi300x"));
  auto gpus = DiscoverAmdGpus(fs);
  ASSERT_EQ(gpus.size(), 2u);  // k10temp (hwmon0) is not a GPU
  EXPECT_EQ(gpus[0].pci, "0000:0c:00.0");
  EXPECT_EQ(gpus[0].hwmon, "/sys/class/hwmon/hwmon5");
  EXPECT_EQ(gpus[1].pci, "0000:8c:00.0");
}

TEST(AmdGpuCollector, SensorsInReferenceUnits) {
  RootFs fs(Fixture("mi300x"));
  AmdGpuCollector c(fs);
  auto s = CollectOnce(c);
  EXPECT_DOUBLE_EQ(s.At(R"(hw_gpu_temperature_celsius{gpu="0",host="node1"})"), 45.0);  // temp2 (junction)
  EXPECT_DOUBLE_EQ(s.At(R"(hw_gpu_temperature_celsius{gpu="1",host="node1"})"), 61.5);
  EXPECT_DOUBLE_EQ(s.At(R"(hw_gpu_power_watts{gpu="0",host="node1"})"), 352.0);       // power1_input
  EXPECT_DOUBLE_EQ(s.At(R"(hw_gpu_power_watts{gpu="1",host="node1"})"), 749.3);       // power1_average, 1 decimal
  EXPECT_DOUBLE_EQ(s.At(R"(hw_gpu_clock_mhz{gpu="0",type="sclk",host="node1"})"), 2100);
  EXPECT_DOUBLE_EQ(s.At(R"(hw_gpu_clock_mhz{gpu="0",type="mclk",host="node1"})"), 1300);
  EXPECT_DOUBLE_EQ(s.At(R"(hw_gpu_vram_used_bytes{gpu="1",host="node1"})"), 190000000000.0);
  EXPECT_DOUBLE_EQ(s.At(R"(hw_gpu_vram_total_bytes{gpu="0",host="node1"})"), 205822885888.0);
}

TEST(AmdGpuCollector, RasAndAerCountersAreCounters) {
  RootFs fs(Fixture("mi300x"));
  AmdGpuCollector c(fs);
  auto s = CollectOnce(c);
  EXPECT_EQ(s.At(R"(hw_gpu_ras_umc_ce_total{gpu="0",host="node1"})"), 2);
  EXPECT_EQ(s.At(R"(hw_gpu_ras_umc_ue_total{gpu="1",host="node1"})"), 3);
  EXPECT_EQ(s.At(R"(hw_gpu_ras_xgmi_ue_total{gpu="0",host="node1"})"), 1);
  EXPECT_EQ(s.At(R"(hw_gpu_ras_xgmi_ce_total{gpu="0",host="node1"})"), 5);
  EXPECT_EQ(s.At(R"(hw_gpu_pcie_correctable_total{gpu="0",host="node1"})"), 4);
  EXPECT_EQ(s.At(R"(hw_gpu_pcie_fatal_total{gpu="1",host="node1"})"), 0);
  // GPU 1 has only an aca_umc file: its other RAS families are absent, not zero.
  EXPECT_FALSE(s.Has(R"(hw_gpu_ras_xgmi_ce_total{gpu="1",host="node1"})"));
  for (const char* f : {"hw_gpu_ras_umc_ue_total", "hw_gpu_ras_gfx_ce_total", "hw_gpu_pcie_nonfatal_total"}) {
    EXPECT_EQ(s.types.at(f), prometheus::MetricType::Counter) << f;
  }
  EXPECT_EQ(s.types.at("hw_gpu_temperature_celsius"), prometheus::MetricType::Gauge);
}

TEST(AmdGpuCollector, NoGpusNoFamilies) {
  RootFs fs(Fixture("minimal"));
  AmdGpuCollector c(fs);
  bool ok = false;
  auto s = CollectOnce(c, "node1", &ok);
  EXPECT_TRUE(ok);
  EXPECT_TRUE(s.samples.empty());
}

}  // namespace
}  // namespace mt::exporter
