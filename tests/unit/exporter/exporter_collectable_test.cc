#include <gtest/gtest.h>

#include <prometheus/text_serializer.h>

#include "exporter/collectors.h"
#include "exporter/exporter_collectable.h"
#include "exporter/exposition_parser.h"
#include "tests/unit/exporter/test_util.h"

namespace mt::exporter {
namespace {

using testing::Fixture;
using testing::Index;

class FixedCollector : public Collector {
 public:
  std::string_view name() const override { return "fixed"; }
  bool Collect(MetricSink& sink) override {
    sink.Gauge("hw_procs_running", "runnable", {}, 5);
    return true;
  }
};

TEST(MergeFamilies, MergesSameTypeDropsDuplicatesAndTypeClashes) {
  std::vector<prometheus::MetricFamily> base = ParseExposition(
      "# TYPE a gauge\na{host=\"n\",x=\"1\"} 1\n# TYPE b counter\nb 2\n").families;
  auto extra = ParseExposition(
      "# TYPE a gauge\na{x=\"1\",host=\"n\"} 9\na{host=\"n\",x=\"2\"} 3\n# TYPE b gauge\nb 7\nc 4\n").families;
  size_t dropped = MergeFamilies(base, std::move(extra));
  EXPECT_EQ(dropped, 2u);  // a{x=1} (same series, other label order) and b (type clash)
  auto s = Index(base);
  EXPECT_EQ(s.At(R"(a{host="n",x="1"})"), 1);
  EXPECT_EQ(s.At(R"(a{host="n",x="2"})"), 3);
  EXPECT_EQ(s.At("b{}"), 2);
  EXPECT_EQ(s.At("c{}"), 4);
}

TEST(ExporterCollectable, NativeThenSelfMetrics) {
  std::vector<std::unique_ptr<Collector>> cs;
  cs.push_back(std::make_unique<FixedCollector>());
  ExporterCollectable e("node7", std::move(cs), nullptr);
  auto s = Index(e.Collect());
  EXPECT_EQ(s.At(R"(hw_procs_running{host="node7"})"), 5);
  EXPECT_TRUE(s.Has(R"(hw_scrape_duration_seconds{host="node7"})"));
  EXPECT_EQ(s.At(R"(mt_exporter_collector_success{collector="fixed",host="node7"})"), 1);
  EXPECT_EQ(s.families.front().name, "hw_procs_running");
}

TEST(ExporterCollectable, FullFixtureScrapeSerialisesAndReparsesCleanly) {
  RootFs fs(Fixture("mi300x"));
  Options o;
  o.host = "node1";
  ExporterCollectable e("node1", BuildCollectors(o, fs), nullptr);
  std::string text = prometheus::TextSerializer().Serialize(e.Collect());
  auto parsed = ParseExposition(text);
  EXPECT_TRUE(parsed.errors.empty()) << parsed.errors.front().reason;
  auto s = Index(parsed.families);
  EXPECT_EQ(s.At(R"(hw_gpu_power_watts{gpu="1",host="node1"})"), 749.3);
  EXPECT_EQ(s.At(R"(hw_tcp_retransmits_total{host="node1"})"), 4242);
  EXPECT_GT(parsed.families.size(), 60u);
}

}  // namespace
}  // namespace mt::exporter
