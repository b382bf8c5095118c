#include <gtest/gtest.h>

#include "exporter/rdma_collector.h"
#include "tests/unit/exporter/test_util.h"

namespace mt::exporter {
namespace {

using testing::Fixture;
using testing::CollectOnce;

TEST(RdmaCollector, StandardCountersAreWordsTimesFour) {
  RootFs fs(Fixture("mi300x"));
  RdmaCollector c(fs);
  auto s = CollectOnce(c);
  const std::string l = R"({device="mlx5_0",port="1",host="node1"})";
  EXPECT_EQ(s.At("hw_rdma_rx_bytes_total" + l), 1000);  // port_rcv_data 250 words
  EXPECT_EQ(s.At("hw_rdma_tx_bytes_total" + l), 2000);
  EXPECT_EQ(s.At("hw_rdma_rx_pkts_total" + l), 33);
  EXPECT_EQ(s.At("hw_rdma_tx_pkts_total" + l), 44);
  EXPECT_EQ(s.At("hw_rdma_port_state" + l), 1);
  // A Mellanox hw_counters dir has no ionic names: no ionic families for it.
  EXPECT_FALSE(s.Has("hw_rdma_tx_retx_pkts_total" + l));
}

TEST(RdmaCollector, IonicCountersWhenNoStandardCounters) {
  RootFs fs(Fixture("mi300x"));
  RdmaCollector c(fs);
  auto s = CollectOnce(c);
  const std::string l = R"({device="ionic_0",port="1",host="node1"})";
  // fixture values: base 1000 + position in the counter list
  EXPECT_EQ(s.At("hw_rdma_rx_bytes_total" + l), 1001);
  EXPECT_EQ(s.At("hw_rdma_tx_pkts_total" + l), 1004);
  EXPECT_EQ(s.At("hw_rdma_tx_retx_bytes_total" + l), 1006);
  EXPECT_EQ(s.At("hw_rdma_tx_retx_pkts_total" + l), 1007);
  EXPECT_EQ(s.At("hw_rdma_tx_ack_timeout_total" + l), 1008);
  EXPECT_EQ(s.At("hw_rdma_rx_ecn_pkts_total" + l), 1009);
  EXPECT_EQ(s.At("hw_rdma_rx_cnp_pkts_total" + l), 1010);
  EXPECT_EQ(s.At("hw_rdma_tx_cnp_pkts_total" + l), 1011);
  EXPECT_EQ(s.At("hw_rdma_req_rx_cqe_err_total" + l), 1012);
  EXPECT_EQ(s.At("hw_rdma_req_tx_retry_excd_err_total" + l), 1013);
  EXPECT_EQ(s.At("hw_rdma_ccl_tx_retx_pkts_total" + l), 1014);
  EXPECT_EQ(s.At("hw_rdma_ccl_tx_retx_bytes_total" + l), 1015);
  EXPECT_EQ(s.At("hw_rdma_ccl_tx_ack_timeout_total" + l), 1016);
  EXPECT_EQ(s.At("hw_rdma_ccl_tx_pkts_total" + l), 1017);
  EXPECT_EQ(s.At("hw_rdma_ccl_tx_bytes_total" + l), 1018);
  EXPECT_EQ(s.At("hw_rdma_ccl_rx_pkts_total" + l), 1019);
  EXPECT_EQ(s.At("hw_rdma_ccl_rx_bytes_total" + l), 1020);
  EXPECT_EQ(s.At("hw_rdma_rx_dup_response_total" + l), 1021);
  EXPECT_EQ(s.At("hw_rdma_rx_dup_request_total" + l), 1022);
  EXPECT_EQ(s.At("hw_rdma_port_state" + l), 1);
  EXPECT_EQ(s.At(R"(hw_rdma_port_state{device="ionic_1",port="1",host="node1"})"), 0);
  for (const auto& [name, type] : s.types) {
    if (name != "hw_rdma_port_state") {
      EXPECT_EQ(type, prometheus::MetricType::Counter) << name;
    }
  }
}

TEST(RdmaCollector, NoInfinibandNoFamilies) {
  RootFs fs(Fixture("minimal"));
  RdmaCollector c(fs);
  EXPECT_TRUE(CollectOnce(c).samples.empty());
}

}  // namespace
}  // namespace mt::exporter
