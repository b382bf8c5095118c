// The exporter catalog (configs/exporter_families.yaml as compiled in) and exporter
// detection over metric names: the recorded-format exposition fixtures of the central-store
// test, dcgm-exporter 4.9 renames, our own exporter's names (never taken for a third-party
// one), malformed catalogs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "tests/unit/status_matchers.h"
#include "tools/tsdb/exporter_catalog.h"

namespace mt::tools {
namespace {
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using base::Errc;
using testing_status::StatusIs;

const ExporterSpec& Spec(const std::string& id) {
  const auto& c = ExporterCatalog();
  auto it = std::find_if(c.begin(), c.end(), [&](const ExporterSpec& s) { return s.id == id; });
  if (it == c.end()) throw std::runtime_error("no exporter " + id);
  return *it;
}

const ExporterFamily& Family(const ExporterSpec& s, const std::string& name) {
  auto it = std::find_if(s.families.begin(), s.families.end(), [&](const ExporterFamily& f) { return f.name == name; });
  if (it == s.families.end()) throw std::runtime_error("no family " + name + " in " + s.id);
  return *it;
}

// Metric names of an exposition file, as a store's __name__ values would list them.
std::vector<std::string> NamesIn(const std::string& file, const std::string& prefix = "") {
  std::ifstream in(std::filesystem::path(MT_EXPOSITION_FIXTURES) / file);
  std::set<std::string> names;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    names.insert(prefix + line.substr(0, line.find_first_of("{ ")));
  }
  return {names.begin(), names.end()};
}

const DetectedExporter* Find(const std::vector<DetectedExporter>& v, const std::string& id, const std::string& prefix = "") {
  for (const auto& d : v)
    if (d.id == id && d.prefix == prefix) return &d;
  return nullptr;
}

std::vector<std::string> FamiliesOf(const DetectedExporter& d) {
  std::vector<std::string> out;
  for (const auto& p : d.present) out.push_back(p.family);
  return out;
}

TEST(ExporterCatalog, CompiledInCatalogHasTheThreeExportersAndTheirTraps) {
  ASSERT_EQ(ExporterCatalog().size(), 3u);
  const auto& dcgm = Spec("dcgm_exporter");
  EXPECT_THAT(dcgm.detect, Contains("DCGM_FI_DEV_GPU_TEMP"));
  EXPECT_THAT(dcgm.detect, Contains("DCGM_FI_DEV_GPU_TEMP_CELSIUS"));   // 4.9+
  EXPECT_THAT(dcgm.host_labels, ElementsAre("Hostname", "hostname", "instance"));
  // The XID gauge holds the last XID, it is not a count; ECC is off by default and says how to enable it.
  EXPECT_FALSE(Family(dcgm, "gpu_xid_or_ras").cumulative);
  EXPECT_TRUE(Family(dcgm, "gpu_xid_or_ras").on_by_default);
  EXPECT_FALSE(Family(dcgm, "gpu_ecc").on_by_default);
  EXPECT_THAT(Family(dcgm, "gpu_ecc").enable_hint, HasSubstr("default-counters.csv"));
  EXPECT_TRUE(Family(dcgm, "gpu_ecc").cumulative);
  const auto& amd = Spec("amd_device_metrics_exporter");
  EXPECT_THAT(amd.prefixes, ElementsAre("", "amd_"));
  // Every AMD metric is declared a gauge; the accumulated ones must still be read as counters.
  EXPECT_TRUE(Family(amd, "gpu_ecc").cumulative);
  EXPECT_TRUE(Family(amd, "gpu_remapped_rows").metrics.empty());
  const auto& node = Spec("node_exporter");
  EXPECT_TRUE(Family(node, "net_tcp_retrans").cumulative);   // untyped, but monotonic
  EXPECT_THAT(Family(node, "net_rdma").metrics, Contains("node_infiniband_link_downed_total"));   // a subgroup
  EXPECT_THAT(Family(node, "net_rdma").metrics, Contains("node_infiniband_roce_adp_retransmits_total"));   // hw_counters
  EXPECT_THAT(node.host_labels, ElementsAre("instance"));
}

TEST(ExporterCatalog, DetectsDcgmExporterFromItsRecordedExposition) {
  const auto found = DetectExporters(NamesIn("dcgm-exporter-h100-8gpu.prom"));
  ASSERT_EQ(found.size(), 1u);
  const DetectedExporter* d = Find(found, "dcgm_exporter");
  ASSERT_NE(d, nullptr);
  EXPECT_THAT(FamiliesOf(*d), Contains("gpu_power"));
  EXPECT_THAT(FamiliesOf(*d), Contains("gpu_temp"));
  EXPECT_THAT(FamiliesOf(*d), Contains("gpu_xid_or_ras"));
  // What the default configuration leaves out is named, with the way to enable it.
  auto ecc = std::find_if(d->missing.begin(), d->missing.end(), [](const FamilyAbsence& a) { return a.family == "gpu_ecc"; });
  ASSERT_NE(ecc, d->missing.end());
  EXPECT_THAT(ecc->why, HasSubstr("off by default in dcgm_exporter"));
  EXPECT_THAT(ecc->why, HasSubstr("DCGM_FI_DEV_ECC_"));
}

TEST(ExporterCatalog, DetectsAmdWithAndWithoutItsPrefix) {
  const auto plain = DetectExporters(NamesIn("amd-device-metrics-exporter-mi300x-8gpu.prom"));
  ASSERT_NE(Find(plain, "amd_device_metrics_exporter", ""), nullptr);
  EXPECT_EQ(Find(plain, "amd_device_metrics_exporter", "amd_"), nullptr);
  EXPECT_THAT(FamiliesOf(*Find(plain, "amd_device_metrics_exporter")), Contains("gpu_ecc"));
  auto both = NamesIn("amd-device-metrics-exporter-mi300x-8gpu.prom");
  const auto prefixed = NamesIn("amd-device-metrics-exporter-mi300x-8gpu.prom", "amd_");
  both.insert(both.end(), prefixed.begin(), prefixed.end());
  const auto found = DetectExporters(both);
  ASSERT_NE(Find(found, "amd_device_metrics_exporter", "amd_"), nullptr);
  const auto* amd = Find(found, "amd_device_metrics_exporter", "amd_");
  for (const auto& p : amd->present)
    for (const auto& s : p.series) EXPECT_EQ(s.rfind("amd_", 0), 0u) << s;
  // "exports no metric for it" is not the same as "disabled": the hardware has no such counter.
  auto rows = std::find_if(amd->missing.begin(), amd->missing.end(), [](const FamilyAbsence& a) { return a.family == "gpu_remapped_rows"; });
  ASSERT_NE(rows, amd->missing.end());
  EXPECT_THAT(rows->why, HasSubstr("exports no metric"));
}

TEST(ExporterCatalog, DcgmExporter49NamesAreFoundThroughTheirVerifiedAliases) {
  const auto found = DetectExporters({"DCGM_FI_DEV_GPU_TEMP_CELSIUS", "DCGM_FI_DEV_BOARD_POWER_WATTS", "DCGM_FI_DEV_XID_ERROR"});
  const auto* d = Find(found, "dcgm_exporter");
  ASSERT_NE(d, nullptr);
  EXPECT_THAT(FamiliesOf(*d), ElementsAre("gpu_power", "gpu_temp", "gpu_xid_or_ras"));
}

TEST(ExporterCatalog, NodeExporterAndOurOwnExporterNames) {
  const auto node = DetectExporters({"node_load1", "node_netstat_Tcp_RetransSegs", "node_procs_running", "up"});
  ASSERT_EQ(node.size(), 1u);
  EXPECT_THAT(FamiliesOf(node[0]), ElementsAre("net_tcp_retrans", "host_cpu_runnable"));
  // mt's own exporter (hw_*, tb_*) is not a third-party exporter: nothing is detected.
  EXPECT_TRUE(DetectExporters({"hw_gpu_power_watts", "hw_gpu_temp_celsius", "hw_tcp_retrans_segs_total", "tb_step", "up"}).empty());
}

TEST(ExporterCatalog, MalformedCatalogsAreRefusedWithWhere) {
  EXPECT_THAT(ParseExporterCatalog("a: 1\n").status(), StatusIs(Errc::kInvalid, HasSubstr("no `exporters` mapping")));
  EXPECT_THAT(ParseExporterCatalog("exporters:\n  x:\n    detect: [a]\n").status(),
              StatusIs(Errc::kInvalid, HasSubstr("exporter catalog: x: has no families mapping")));
  EXPECT_THAT(ParseExporterCatalog("exporters:\n  x:\n    families: {f: {metrics: [m]}}\n").status(),
              StatusIs(Errc::kInvalid, HasSubstr("has no detect names")));
  EXPECT_THAT(ParseExporterCatalog("exporters: [").status(), StatusIs(Errc::kInvalid, HasSubstr("exporter catalog")));
}

TEST(ExporterCatalog, HostOfInstance) {
  EXPECT_EQ(HostOfInstance("gpu-node-01:9400"), "gpu-node-01");
  EXPECT_EQ(HostOfInstance("10.0.0.7:9100"), "10.0.0.7");
  EXPECT_EQ(HostOfInstance("[fe80::1]:9100"), "fe80::1");
  EXPECT_EQ(HostOfInstance("fe80::1"), "fe80::1");
  EXPECT_EQ(HostOfInstance("node7"), "node7");
  EXPECT_EQ(HostOfInstance("node7:http"), "node7:http");
}

}  // namespace
}  // namespace mt::tools
