// StoreSignals: the per-host expressions attribution reads, on a job's own TSDB (hw_* names)
// and on a store of third-party exporters. The exporter expressions are evaluated by a real
// Prometheus over blocks written by the real promtool from exposition in the exporters' own
// names and labels (dcgm-exporter's Hostname, node_exporter's instance with its port), and
// must give per-host values under one `host` label, with what is missing named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "tests/unit/tools/query_tsdb/tsdb_fixture.h"
#include "tools/tsdb/prometheus_client.h"
#include "tools/tsdb/store_signals.h"
#include "tools/tsdb/tsdb_attribution.h"
#include "tools/tsdb/tsdb_context.h"
#include "tools/tsdb/tsdb_manager.h"

namespace mt::tools {
namespace {
namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

constexpr long kT0 = testing::kStart, kT1 = testing::kStart + 3600;
const char* const kHosts[] = {"gpu-01", "gpu-02", "gpu-03"};

// One hour at 15 s: dcgm-exporter (2 GPUs per host, Hostname label) and node_exporter
// (instance with :9100). gpu-02 runs 10 °C hotter and retransmits 20 segments/s; gpu-03's
// GPU 1 logs XID 79 (fallen off the bus) at half time, as a new err_code series; gpu-01
// spends 30 % of its time fully stalled on I/O; gpu-03's NIC retransmits 10/s and times out
// 2/s (two counters, one signal); host memory: 200 of 256 GiB available.
std::string Exposition() {
  std::string o;
  auto line = [&o](const std::string& s) { o += s + "\n"; };
  line("# TYPE DCGM_FI_DEV_GPU_TEMP gauge");
  for (long t = kT0; t <= kT1; t += 15)
    for (int h = 0; h < 3; ++h)
      for (int g = 0; g < 2; ++g)
        line("DCGM_FI_DEV_GPU_TEMP{gpu=\"" + std::to_string(g) + "\",Hostname=\"" + kHosts[h] + "\",instance=\"10.0.0." +
             std::to_string(h) + ":9400\"} " + std::to_string(h == 1 ? 70 : 60) + " " + std::to_string(t));
  line("# TYPE DCGM_FI_DEV_POWER_USAGE gauge");
  for (long t = kT0; t <= kT1; t += 15)
    for (int h = 0; h < 3; ++h)
      line("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",Hostname=\"" + std::string(kHosts[h]) + "\"} 650 " + std::to_string(t));
  line("# TYPE DCGM_FI_DEV_GPU_UTIL gauge");
  for (long t = kT0; t <= kT1; t += 15)
    for (int h = 0; h < 3; ++h)
      line("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"" + std::string(kHosts[h]) + "\"} 97 " + std::to_string(t));
  line("# TYPE DCGM_FI_DEV_XID_ERRORS gauge");
  for (long t = kT0; t <= kT1; t += 15)
    for (int h = 0; h < 3; ++h)
      for (int g = 0; g < 2; ++g) {
        const bool fell = h == 2 && g == 1 && t >= kT0 + 1800;
        line("DCGM_FI_DEV_XID_ERRORS{gpu=\"" + std::to_string(g) + "\",Hostname=\"" + kHosts[h] + "\",err_code=\"" +
             (fell ? "79" : "0") + "\"} " + (fell ? "79" : "0") + " " + std::to_string(t));
      }
  line("# TYPE node_netstat_Tcp_RetransSegs gauge");
  line("# TYPE node_pressure_io_stalled_seconds counter");
  line("# TYPE node_procs_running gauge");
  line("# TYPE node_memory_MemAvailable_bytes gauge");
  line("# TYPE node_memory_MemTotal_bytes gauge");
  line("# TYPE node_uname_info gauge");
  line("# TYPE node_infiniband_roce_adp_retransmits counter");
  line("# TYPE node_infiniband_local_ack_timeout_errors counter");
  for (long t = kT0; t <= kT1; t += 15)
    for (int h = 0; h < 3; ++h) {
      const std::string l = "{instance=\"" + std::string(kHosts[h]) + ":9100\",job=\"node\"} ", ts = " " + std::to_string(t);
      const double dt = static_cast<double>(t - kT0);
      line("node_netstat_Tcp_RetransSegs" + l + std::to_string(1000 + (h == 1 ? 20 : 0.1) * dt) + ts);
      line("node_pressure_io_stalled_seconds_total" + l + std::to_string(50 + (h == 0 ? 0.3 : 0.01) * dt) + ts);
      line("node_procs_running" + l + "9" + ts);
      line("node_memory_MemAvailable_bytes" + l + std::to_string(200.0 * (1 << 30)) + ts);
      line("node_memory_MemTotal_bytes" + l + std::to_string(256.0 * (1 << 30)) + ts);
      line("node_uname_info" + l + "1" + ts);
      // two RDMA retransmit counters with the same labels: gpu-03 retransmits 10/s and times out 2/s
      const std::string nic = "{device=\"mlx5_0\",port=\"1\",instance=\"" + std::string(kHosts[h]) + ":9100\",job=\"node\"} ";
      line("node_infiniband_roce_adp_retransmits_total" + nic + std::to_string((h == 2 ? 10 : 0) * dt) + ts);
      line("node_infiniband_local_ack_timeout_errors_total" + nic + std::to_string((h == 2 ? 2 : 0) * dt) + ts);
    }
  line("# EOF");
  return o;
}

std::vector<ExporterInStore> Detected(const std::vector<std::string>& names) {
  std::vector<ExporterInStore> out;
  for (auto& d : DetectExporters(names)) out.push_back({d, "", {}});
  return out;
}

const FamilySignalOnStore& Family(const StoreSignals& s, const std::string& f) {
  for (const auto& x : s.families)
    if (x.family == f) return x;
  throw std::runtime_error("no family " + f);
}

TEST(StoreSignals, OurOwnStoreReadsTheHwNames) {
  const StoreSignals s = MtStoreSignals();
  EXPECT_EQ(s.vocabulary, "mt");
  EXPECT_EQ(Family(s, "tcp").signal.expr, "sum by (host) (rate(hw_tcp_retransmits_total[%R]))");
  EXPECT_EQ(Family(s, "thermal").floor, 6);
  EXPECT_EQ(s.fatal.size(), 4u);
  EXPECT_EQ(s.gpu_util.series, "ray_node_gpus_utilization");
}

TEST(StoreSignals, MissingFamiliesSayWhyInsteadOfReadingNothing) {
  // dcgm-exporter alone: no node_exporter, so no network, I/O, CPU or host-memory signal.
  const StoreSignals s = ExporterStoreSignals(Detected({"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_XID_ERRORS"}));
  EXPECT_EQ(s.vocabulary, "exporters");
  EXPECT_TRUE(Family(s, "thermal").signal.present());
  EXPECT_EQ(Family(s, "thermal").signal.series, "DCGM_FI_DEV_GPU_TEMP");
  for (const char* f : {"rdma", "tcp", "io_stall", "cpu_contention"}) {
    EXPECT_FALSE(Family(s, f).signal.present()) << f;
    EXPECT_THAT(Family(s, f).signal.missing, HasSubstr("node_exporter does not report")) << f;
  }
  EXPECT_FALSE(s.oom_kills.present());
  EXPECT_FALSE(s.gpu_util.present());
  EXPECT_THAT(s.gpu_util.missing, HasSubstr("dcgm_exporter"));
  // node_exporter without its pressure collector's series (a kernel without PSI)
  const StoreSignals n = ExporterStoreSignals(Detected({"node_uname_info", "node_cpu_seconds_total", "node_netstat_Tcp_RetransSegs"}));
  EXPECT_TRUE(Family(n, "tcp").signal.present());
  EXPECT_FALSE(Family(n, "io_stall").signal.present());
  EXPECT_THAT(Family(n, "io_stall").signal.missing, HasSubstr("host_pressure"));
}

TEST(StoreSignals, DcgmExporter49VerifiedRenamesAreRead) {
  const StoreSignals s = ExporterStoreSignals(Detected({"DCGM_FI_DEV_GPU_TEMP_CELSIUS", "DCGM_FI_DEV_BOARD_POWER_WATTS",
                                                        "DCGM_FI_DEV_GPU_UTIL_RATIO", "DCGM_FI_DEV_XID_ERROR"}));
  EXPECT_EQ(Family(s, "thermal").signal.series, "DCGM_FI_DEV_GPU_TEMP_CELSIUS");
  // its utilization rename is unverified (the catalog does not list it): missing, and said so
  EXPECT_FALSE(s.gpu_util.present());
  EXPECT_THAT(s.gpu_util.missing, HasSubstr("dcgm_exporter"));
  ASSERT_FALSE(s.fatal.empty());
  EXPECT_THAT(s.fatal.front().series, HasSubstr("DCGM_FI_DEV_XID_ERROR "));
  EXPECT_EQ(s.presence.back().series, "DCGM_FI_DEV_BOARD_POWER_WATTS");
}

// compare_jobs judges exporter series one by one: each series a family signal reads must
// map back to that family and have a floor in its units, older and 4.9 dcgm names alike.
TEST(StoreSignals, EverySeriesAFamilyReadsIsKnownToCompareJobs) {
  for (const auto& names : std::vector<std::vector<std::string>>{
           {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "node_uname_info", "node_netstat_Tcp_RetransSegs",
            "node_procs_running", "node_pressure_io_stalled_seconds_total", "node_infiniband_roce_adp_retransmits_total",
            "node_infiniband_local_ack_timeout_errors_total", "node_infiniband_packet_sequence_errors_total"},
           {"DCGM_FI_DEV_GPU_TEMP_CELSIUS", "DCGM_FI_DEV_BOARD_POWER_WATTS", "DCGM_FI_DEV_XID_ERROR"},
           {"amd_gpu_junction_temperature", "amd_gpu_package_power", "gpu_edge_temperature", "gpu_package_power"}}) {
    const StoreSignals s = ExporterStoreSignals(Detected(names));
    for (const auto& f : s.families) {
      if (!f.signal.present()) continue;
      std::string rest = f.signal.series;
      for (size_t at; !rest.empty(); rest = at == std::string::npos ? "" : rest.substr(at + 2)) {
        at = rest.find(", ");
        const std::string series = rest.substr(0, at);
        EXPECT_EQ(FamilyOfMetric(series), f.family) << series;
        EXPECT_GT(MetricFloor(series), 0) << series;
      }
    }
    for (const auto& fatal : s.fatal) EXPECT_EQ(FamilyOfMetric(fatal.series), "node_death") << fatal.series;
    if (s.presence.size() > 1) {   // the GPU power series
      EXPECT_GT(MetricFloor(s.presence.back().series), 0) << s.presence.back().series;
    }
  }
}

TEST(StoreSignals, AmdTemperaturePrefersJunctionOverTheZeroEdgeOfMi300) {
  const StoreSignals s = ExporterStoreSignals(
      Detected({"amd_gpu_gfx_activity", "amd_gpu_package_power", "amd_gpu_edge_temperature", "amd_gpu_junction_temperature"}));
  EXPECT_EQ(Family(s, "thermal").signal.series, "amd_gpu_junction_temperature");
  EXPECT_THAT(Family(s, "thermal").signal.expr, HasSubstr("\"hostname\""));
  EXPECT_EQ(s.gpu_util.series, "amd_gpu_gfx_activity");
  // A cluster of NVIDIA and AMD nodes (AMD's exporter both with and without its prefix):
  // every GPU exporter's hosts are read
  const StoreSignals mixed = ExporterStoreSignals(Detected({"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "amd_gpu_gfx_activity",
                                                            "amd_gpu_package_power", "amd_gpu_junction_temperature",
                                                            "gpu_gfx_activity", "gpu_package_power", "gpu_edge_temperature"}));
  EXPECT_EQ(Family(mixed, "thermal").signal.series, "DCGM_FI_DEV_GPU_TEMP, gpu_edge_temperature, amd_gpu_junction_temperature");
  EXPECT_THAT(Family(mixed, "thermal").signal.expr, HasSubstr(") or ("));
}

TEST(StoreSignals, ExporterExpressionsGivePerHostValuesOnARealPrometheus) {
  const fs::path root = testing::TempDir("signals");
  const fs::path tsdb = root / "store" / "prometheus";
  fs::create_directories(tsdb);
  const fs::path om = root / "store.om";
  std::ofstream(om) << Exposition();
  ASSERT_EQ(std::system(("promtool tsdb create-blocks-from openmetrics -q '" + om.string() + "' '" + tsdb.string() +
                         "' > /dev/null 2>&1").c_str()), 0);
  TsdbManagerOptions opts;
  opts.port_first = testing::TestPortBase() + 20;   // the manager tests use base..base+19
  opts.port_last = opts.port_first + 4;
  opts.temp_root = root;
  {
    TsdbManager manager(opts);
    TsdbLease lease = manager.Acquire({tsdb, false, std::nullopt});
    PrometheusClient client(lease.url());
    TsdbContext ctx(client, {static_cast<double>(kT0), static_cast<double>(kT1)}, nullptr);
    const StoreSignals& s = ctx.Signals();
    ASSERT_EQ(s.vocabulary, "exporters");
    const double at = kT0 + 3000;
    auto eval = [&](const HostSignal& sig) { return ctx.PerHost(FillWindows(sig.expr, "120s", "60s", "3600s"), at); };
    auto near = [](double want) { return ::testing::DoubleNear(want, 0.01 * std::fabs(want) + 1e-6); };

    EXPECT_THAT(eval(Family(s, "thermal").signal), ElementsAre(Pair("gpu-01", 60), Pair("gpu-02", 70), Pair("gpu-03", 60)));
    EXPECT_THAT(eval(Family(s, "tcp").signal),
                ElementsAre(Pair("gpu-01", near(0.1)), Pair("gpu-02", near(20)), Pair("gpu-03", near(0.1))));
    EXPECT_THAT(eval(Family(s, "io_stall").signal),
                ElementsAre(Pair("gpu-01", near(30)), Pair("gpu-02", near(1)), Pair("gpu-03", near(1))));
    EXPECT_THAT(eval(Family(s, "cpu_contention").signal), ElementsAre(Pair("gpu-01", 9), Pair("gpu-02", 9), Pair("gpu-03", 9)));
    EXPECT_THAT(eval(Family(s, "rdma").signal),
                ElementsAre(Pair("gpu-01", near(0)), Pair("gpu-02", near(0)), Pair("gpu-03", near(12))));
    ASSERT_EQ(s.fatal.size(), 1u);
    EXPECT_THAT(eval(s.fatal.front()), ElementsAre(Pair("gpu-03", 1)));   // one GPU with a fatal XID
    EXPECT_THAT(eval(s.mem_used_ratio), ElementsAre(Pair("gpu-01", near(0.21875)), Pair("gpu-02", near(0.21875)),
                                                    Pair("gpu-03", near(0.21875))));
    EXPECT_THAT(eval(s.gpu_util), ElementsAre(Pair("gpu-01", 97), Pair("gpu-02", 97), Pair("gpu-03", 97)));
    // dcgm's Hostname becomes `host`: 5 samples in the 60 s presence window (both ends included)
    EXPECT_THAT(eval(s.presence.back()), ElementsAre(Pair("gpu-01", 5), Pair("gpu-02", 5), Pair("gpu-03", 5)));

    // Restricted to the job's hosts, the others' series are gone.
    ctx.RestrictHosts({"gpu-02"});
    EXPECT_THAT(ctx.Hosts(), ElementsAre("gpu-02"));
    EXPECT_THAT(eval(Family(s, "thermal").signal), ElementsAre(Pair("gpu-02", 70)));
  }
  std::error_code ec;
  fs::remove_all(root, ec);
}

TEST(StoreSignals, HostLabelComesFromTheBestLabelPresentElseInstanceWithoutItsPort) {
  const std::string e = WithHostLabel("up", {"Hostname", "hostname", "instance"});
  // instance first, then the exporter's labels from the weakest to the best
  EXPECT_LT(e.find("\"instance\""), e.find("\"hostname\""));
  EXPECT_LT(e.find("\"hostname\""), e.find("\"Hostname\""));
  EXPECT_EQ(e.rfind("label_replace(", 0), 0u);
}

}  // namespace
}  // namespace mt::tools
