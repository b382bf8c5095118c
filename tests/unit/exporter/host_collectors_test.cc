#include <gtest/gtest.h>

#include "exporter/memory_collector.h"
#include "exporter/netdev_collector.h"
#include "exporter/pressure_collector.h"
#include "exporter/proc_stat_collector.h"
#include "exporter/kfd_collector.h"
#include "exporter/tcp_collector.h"
#include "tests/unit/exporter/test_util.h"

namespace mt::exporter {
namespace {

using testing::Fixture;
using testing::CollectOnce;

TEST(ProcStatCollector, ReadsRunnableBlockedAndContextSwitches) {
  RootFs fs(Fixture("mi300x"));
  ProcStatCollector c(fs);
  bool ok = false;
  auto s = CollectOnce(c, "node1", &ok);
  EXPECT_TRUE(ok);
  EXPECT_EQ(s.At("hw_procs_running{host=\"node1\"}"), 17);
  EXPECT_EQ(s.At("hw_procs_blocked{host=\"node1\"}"), 3);
  EXPECT_EQ(s.At("hw_context_switches_total{host=\"node1\"}"), 987654321);
  EXPECT_EQ(s.types.at("hw_context_switches_total"), prometheus::MetricType::Counter);
  EXPECT_EQ(s.types.at("hw_procs_running"), prometheus::MetricType::Gauge);
}

TEST(ProcStatCollector, MissingFileMeansNoFamiliesNotZeros) {
  RootFs fs(Fixture("does-not-exist"));
  ProcStatCollector c(fs);
  auto s = CollectOnce(c);
  EXPECT_TRUE(s.samples.empty());
}

TEST(MemoryCollector, ConvertsKilobytesToBytesAndReadsOomKills) {
  RootFs fs(Fixture("mi300x"));
  MemoryCollector c(fs);
  auto s = CollectOnce(c);
  EXPECT_EQ(s.At("hw_mem_dirty_bytes{host=\"node1\"}"), 1000 * 1024);
  EXPECT_EQ(s.At("hw_mem_writeback_bytes{host=\"node1\"}"), 12 * 1024);
  EXPECT_EQ(s.At("hw_oom_kills_total{host=\"node1\"}"), 2);
  EXPECT_EQ(s.types.at("hw_oom_kills_total"), prometheus::MetricType::Counter);
}

TEST(MemoryCollector, KernelWithoutOomKillLineOmitsTheCounter) {
  RootFs fs(Fixture("minimal"));
  MemoryCollector c(fs);
  auto s = CollectOnce(c);
  EXPECT_TRUE(s.Has("hw_mem_dirty_bytes{host=\"node1\"}"));
  EXPECT_FALSE(s.HasFamily("hw_oom_kills_total"));
}

TEST(PressureCollector, ReadsAvg10Avg300AndFullTotal) {
  RootFs fs(Fixture("mi300x"));
  PressureCollector c(fs);
  auto s = CollectOnce(c);
  EXPECT_DOUBLE_EQ(s.At("hw_io_pressure_some_pct{host=\"node1\"}"), 1.5);
  EXPECT_DOUBLE_EQ(s.At("hw_io_pressure_full_pct{host=\"node1\"}"), 0.75);
  EXPECT_DOUBLE_EQ(s.At("hw_io_pressure_some_avg300_pct{host=\"node1\"}"), 0.43);
  EXPECT_DOUBLE_EQ(s.At("hw_io_pressure_full_avg300_pct{host=\"node1\"}"), 0.36);
  EXPECT_DOUBLE_EQ(s.At("hw_io_pressure_full_total_us{host=\"node1\"}"), 3074028);
  EXPECT_EQ(s.types.at("hw_io_pressure_full_total_us"), prometheus::MetricType::Counter);
}

TEST(PressureCollector, AbsentPsiMeansAbsentFamilies) {
  RootFs fs(Fixture("minimal"));
  PressureCollector c(fs);
  bool ok = false;
  auto s = CollectOnce(c, "node1", &ok);
  EXPECT_TRUE(ok);
  EXPECT_TRUE(s.samples.empty());
}

TEST(NetDevCollector, SkipsLoopbackDockerAndVeth) {
  RootFs fs(Fixture("mi300x"));
  NetDevCollector c(fs);
  auto s = CollectOnce(c);
  const std::string l = "{device=\"enp193s0f0np0\",host=\"node1\"}";
  EXPECT_EQ(s.At("hw_net_rx_bytes_total" + l), 98765432101.0);
  EXPECT_EQ(s.At("hw_net_rx_errors_total" + l), 7);
  EXPECT_EQ(s.At("hw_net_rx_drop_total" + l), 8);
  EXPECT_EQ(s.At("hw_net_tx_bytes_total" + l), 12345678901.0);
  EXPECT_EQ(s.At("hw_net_tx_errors_total" + l), 9);
  EXPECT_EQ(s.At("hw_net_tx_drop_total" + l), 10);
  for (const auto& [key, v] : s.samples) {
    EXPECT_EQ(key.find("device=\"lo\""), std::string::npos) << key;
    EXPECT_EQ(key.find("docker0"), std::string::npos) << key;
    EXPECT_EQ(key.find("veth"), std::string::npos) << key;
  }
  EXPECT_EQ(s.samples.size(), 12u);  // 2 interfaces x 6 counters
}

TEST(TcpCollector, ReadsSnmpAndNetstatCounters) {
  RootFs fs(Fixture("mi300x"));
  TcpCollector c(fs);
  auto s = CollectOnce(c);
  EXPECT_EQ(s.At("hw_tcp_retransmits_total{host=\"node1\"}"), 4242);
  EXPECT_EQ(s.At("hw_tcp_listen_overflows_total{host=\"node1\"}"), 11);
  EXPECT_EQ(s.At("hw_tcp_listen_drops_total{host=\"node1\"}"), 12);
  EXPECT_EQ(s.At("hw_tcp_abort_on_timeout_total{host=\"node1\"}"), 13);
  // EstabResets lives in /proc/net/snmp's Tcp table on Linux.
  EXPECT_EQ(s.At("hw_tcp_estab_resets_total{host=\"node1\"}"), 77);
}

TEST(SnmpValue, PairsHeaderAndValueLinesPerProtocol) {
  std::string text =
      "Ip: Forwarding DefaultTTL\nIp: 1 64\n"
      "Tcp: RtoAlgorithm RetransSegs\nTcp: 1 99\n";
  EXPECT_EQ(SnmpValue(text, "Tcp", "RetransSegs"), 99);
  EXPECT_EQ(SnmpValue(text, "Ip", "DefaultTTL"), 64);
  EXPECT_FALSE(SnmpValue(text, "Tcp", "Nope").has_value());
  EXPECT_FALSE(SnmpValue(text, "Udp", "RetransSegs").has_value());
}

TEST(KfdCollector, CountsNumericProcessEntries) {
  RootFs fs(Fixture("mi300x"));
  KfdCollector c(fs);
  auto s = CollectOnce(c);
  EXPECT_EQ(s.At("hw_gpu_user_processes{host=\"node1\"}"), 2);
  RootFs none(Fixture("minimal"));
  KfdCollector c2(none);
  EXPECT_TRUE(CollectOnce(c2).samples.empty());
}

}  // namespace
}  // namespace mt::exporter
