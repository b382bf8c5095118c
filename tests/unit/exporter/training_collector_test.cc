#include <gtest/gtest.h>

#include <filesystem>

#include "exporter/event_file_finder.h"
#include "exporter/step_line.h"
#include "exporter/training_collector.h"
#include "tests/unit/exporter/temp_dir.h"
#include "tests/unit/exporter/test_util.h"
#include "tests/unit/exporter/tfevent_writer.h"

namespace mt::exporter {
namespace {

using namespace mt::exporter::testing;

constexpr double kT0 = 1800000000.0;  // fake "now" base

std::string StepEvent(int64_t step, double wall, float loss, float step_time) {
  return Record(Event(wall, step, {SimpleValue("learning/loss", loss), SimpleValue("perf/step_time_seconds", step_time)}));
}

struct Fixture {
  TempDir dir;
  double now = kT0;
  std::string events;
  std::unique_ptr<TrainingCollector> c;

  explicit Fixture(const std::string& event_name = "events.out.tfevents.1800000000.node1.123.0") {
    events = "run/tensorboard/" + event_name;
    dir.Write(events, Record(FileVersionEvent(kT0)));
    TrainingOptions o;
    o.job_dir = dir.str();
    o.host = "node1";
    o.since_epoch = kT0 - 10;
    o.now = [this] { return now; };
    c = std::make_unique<TrainingCollector>(o);
  }
  void Append(const std::string& bytes) { dir.Write(events, bytes, true); }
  Scrape Next(double advance = 10) {
    now += advance;
    return CollectOnce(*c);
  }
};

TEST(TrainingCollector, DripsOneCompleteStepPerScrapeWithItsWallTime) {
  Fixture f;
  f.Append(StepEvent(1, kT0 + 1, 9.5f, 5.0f) + StepEvent(2, kT0 + 2, 9.0f, 4.0f) + StepEvent(3, kT0 + 3, 8.5f, 4.5f));
  // The file just grew, so step 3 (the newest) may still be incomplete: steps 1 and 2 go first.
  auto s = f.Next();
  EXPECT_EQ(s.At(R"(tb_step{host="node1"})"), 1);
  EXPECT_EQ(s.At(R"(tb_learning_loss{host="node1"})"), 9.5);
  EXPECT_EQ(s.At(R"(tb_perf_step_time_seconds{host="node1"})"), 5.0);
  EXPECT_EQ(s.At(R"(tb_metrics_plugin_staleness_fill{host="node1"})"), 0);
  for (const auto& fam : s.families) {
    ASSERT_EQ(fam.metric.size(), 1u);
    EXPECT_EQ(fam.metric[0].timestamp_ms, static_cast<int64_t>((kT0 + 1) * 1000)) << fam.name;
    EXPECT_EQ(fam.type, prometheus::MetricType::Gauge);
  }
  EXPECT_EQ(f.Next().At(R"(tb_step{host="node1"})"), 2);
  // The file stopped growing: step 3 is complete now.
  auto s3 = f.Next();
  EXPECT_EQ(s3.At(R"(tb_step{host="node1"})"), 3);
  EXPECT_EQ(s3.families[0].metric[0].timestamp_ms, static_cast<int64_t>((kT0 + 3) * 1000));
}

TEST(TrainingCollector, RepeatsLastStepThenFillsWhenIdle) {
  Fixture f;
  f.Append(StepEvent(7, kT0 + 1, 3.0f, 2.0f));
  f.Next();  // file grew: step 7 held back
  auto real = f.Next();
  ASSERT_EQ(real.At(R"(tb_step{host="node1"})"), 7);
  int64_t ts = real.families[0].metric[0].timestamp_ms;
  auto again = f.Next(100);  // nothing new: the same sample, same timestamp
  EXPECT_EQ(again.At(R"(tb_step{host="node1"})"), 7);
  EXPECT_EQ(again.families[0].metric[0].timestamp_ms, ts);
  EXPECT_EQ(again.At(R"(tb_metrics_plugin_staleness_fill{host="node1"})"), 0);
  auto fill = f.Next(60);  // 160 s idle: a fill stamped now
  EXPECT_EQ(fill.At(R"(tb_metrics_plugin_staleness_fill{host="node1"})"), 1);
  EXPECT_EQ(fill.At(R"(tb_learning_loss{host="node1"})"), 3.0);
  EXPECT_EQ(fill.families[0].metric[0].timestamp_ms, static_cast<int64_t>(f.now * 1000));
  // A new real step after the fill is stamped after it, never before.
  f.Append(StepEvent(8, kT0 + 2, 2.9f, 2.0f));
  f.Next(1);
  auto next = f.Next(1);
  EXPECT_EQ(next.At(R"(tb_step{host="node1"})"), 8);
  EXPECT_EQ(next.At(R"(tb_metrics_plugin_staleness_fill{host="node1"})"), 0);
  EXPECT_GT(next.families[0].metric[0].timestamp_ms, fill.families[0].metric[0].timestamp_ms);
}

TEST(TrainingCollector, LongBacklogSkipsOldestToStayCurrent) {
  Fixture f;
  std::string bytes;
  for (int i = 0; i < 50; ++i) bytes += StepEvent(i, kT0 + i, 1.0f, 1.0f);
  f.Append(bytes);
  auto s = f.Next();
  // 49 complete steps, backlog 8: steps up to 40 are skipped, 41 is emitted first.
  EXPECT_EQ(s.At(R"(tb_step{host="node1"})"), 41);
  EXPECT_EQ(f.c->skipped_steps(), 41u);
}

TEST(TrainingCollector, NoFileMeansNoFamilies) {
  TempDir dir;
  TrainingOptions o;
  o.job_dir = dir.str();
  o.host = "node1";
  TrainingCollector c(o);
  EXPECT_TRUE(CollectOnce(c).samples.empty());
}

TEST(TrainingCollector, ResyncsAfterAPartialRecordWrittenInPieces) {
  Fixture f;
  std::string rec = StepEvent(5, kT0 + 5, 4.0f, 3.0f);
  f.Append(rec.substr(0, 10));
  EXPECT_TRUE(f.Next().samples.empty());
  f.Append(rec.substr(10));
  f.Next();
  EXPECT_EQ(f.Next().At(R"(tb_step{host="node1"})"), 5);
  // Garbage then a valid record: the valid one is still found.
  f.Append(std::string("\x13\x37garbage!", 10) + StepEvent(6, kT0 + 6, 3.5f, 3.0f));
  f.Next();
  auto s = f.Next();
  EXPECT_EQ(s.At(R"(tb_step{host="node1"})"), 6);
  EXPECT_GE(f.c->record_stats()->corrupt, 1u);
}

TEST(TrainingCollector, FallsBackToJobLogUntilAnEventFileAppears) {
  TempDir dir;
  std::string job = dir.str() + "/7877-JAX-llama2-70b";
  std::filesystem::create_directories(job);
  dir.Write("7877-JAX-llama2-70b.log",
            "JOB_ID=7877\n"
            " 0: completed step: 0, seconds: 40.1, TFLOP/s/device: 12.0, MFU: 1.00%, Tokens/s/device: 100.5, total_weights: 1, loss: 11.2\n"
            " 1: completed step: 0, seconds: 40.2, TFLOP/s/device: 12.0, MFU: 1.00%, Tokens/s/device: 101.5, total_weights: 1, loss: 11.2\n");
  std::filesystem::create_symlink("../7877-JAX-llama2-70b.log", job + "/log");
  double now = kT0;
  TrainingOptions o;
  o.job_dir = job;
  o.host = "node1";
  o.since_epoch = kT0 - 10;
  o.now = [&] { return now; };
  TrainingCollector c(o);
  now += 1;
  auto s = CollectOnce(c);
  EXPECT_EQ(s.At(R"(tb_step{host="node1"})"), 0);
  EXPECT_EQ(s.At(R"(tb_perf_step_time_seconds{host="node1"})"), 40.1);  // rank 0's line
  EXPECT_EQ(s.At(R"(tb_perf_per_device_tokens_per_sec{host="node1"})"), 100.5);
  EXPECT_EQ(s.At(R"(tb_learning_loss{host="node1"})"), 11.2);
  EXPECT_EQ(s.families[0].metric[0].timestamp_ms, static_cast<int64_t>(now * 1000));
  dir.Write("7877-JAX-llama2-70b.log", " 0: completed step: 1, seconds: 5.5, TFLOP/s/device: 900.0, Tokens/s/device: 3000, total_weights: 1, loss: 10.9\n", true);
  now += 10;
  EXPECT_EQ(CollectOnce(c).At(R"(tb_step{host="node1"})"), 1);
  // MaxText starts writing its event file: it takes over from the log.
  dir.Write("7877-JAX-llama2-70b/run/tensorboard/events.out.tfevents.1800000005.node1",
            Record(FileVersionEvent(kT0 + 5)) + StepEvent(2, kT0 + 12, 10.5f, 5.4f));
  now += 10;
  CollectOnce(c);
  now += 10;
  auto e = CollectOnce(c);
  EXPECT_EQ(e.At(R"(tb_step{host="node1"})"), 2);
  EXPECT_EQ(e.At(R"(tb_learning_loss{host="node1"})"), 10.5);
  EXPECT_NE(c.source().find("events.out.tfevents"), std::string::npos);
}

TEST(ExporterParseStepLine, RankPrefixesMfuAndMissingFields) {
  auto a = ParseStepLine("12: completed step: 33, seconds: 5.667, TFLOP/s/device: 934.2, MFU: 37.37%, Tokens/s/device: 3290.1, total_weights: 65536, loss: 7.123");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->rank, 12);
  EXPECT_EQ(a->step, 33);
  EXPECT_DOUBLE_EQ(a->seconds, 5.667);
  EXPECT_DOUBLE_EQ(*a->tokens_per_sec, 3290.1);
  EXPECT_DOUBLE_EQ(*a->loss, 7.123);
  auto b = ParseStepLine("completed step: 4, seconds: 1.0, TFLOP/s/device: 1.0, Tokens/s/device: 2.0, total_weights: 1");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->rank, -1);
  EXPECT_FALSE(b->loss);
  EXPECT_FALSE(ParseStepLine("completed step: x, seconds: 1"));
  EXPECT_FALSE(ParseStepLine("step 4 done"));
}

TEST(FindNewestEventFile, PrefersThisHostNewestEpochAndHonoursSince) {
  TempDir dir;
  dir.Write("a/events.out.tfevents.1700000000.node1", "x");  // too old
  dir.Write("b/events.out.tfevents.1800000100.node2.5.0", "x");
  dir.Write("c/d/events.out.tfevents.1800000050.node1.9.0", "x");
  dir.Write("prometheus/events.out.tfevents.1800000200.node1", "x");  // pruned dir
  dir.Write("events.out.tfevents.notanumber.node1", "x");
  dir.Write("c/d/events.out.tfevents.1800000099.node1.profile-empty", "x");  // profiler leftovers
  auto f = FindNewestEventFile(dir.str(), "node1", 1800000000);
  ASSERT_TRUE(f);
  EXPECT_EQ(*f, dir.str() + "/c/d/events.out.tfevents.1800000050.node1.9.0");
  auto g = FindNewestEventFile(dir.str(), "node9", 1800000000);  // no file of this host: newest
  ASSERT_TRUE(g);
  EXPECT_EQ(*g, dir.str() + "/b/events.out.tfevents.1800000100.node2.5.0");
  EXPECT_FALSE(FindNewestEventFile(dir.str(), "node1", 1900000000));
  EXPECT_EQ(EventFileEpoch("events.out.tfevents.1800000050.node1"), 1800000050.0);
}

}  // namespace
}  // namespace mt::exporter
