#include <gtest/gtest.h>

#include <random>

#include "exporter/crc32c.h"
#include "exporter/tfevent.h"
#include "exporter/tfrecord_reader.h"
#include "tests/unit/exporter/tfevent_writer.h"

namespace mt::exporter {
namespace {

using namespace mt::exporter::testing;

std::vector<std::string> ReadAll(TfRecordReader& r, StringSource& src) {
  std::vector<std::string> out;
  r.Poll(src, [&](std::string_view d) { out.emplace_back(d); });
  return out;
}

TEST(ExporterCrc32c, KnownVectors) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xe3069283u);  // the standard CRC-32C check value
  EXPECT_EQ(Crc32c("", 0), 0u);
  std::string zeros(32, '\0');
  EXPECT_EQ(Crc32c(zeros.data(), zeros.size()), 0x8a9136aau);  // RFC 3720 B.4
}

TEST(TfRecordReader, ReadsEveryRecordInOrder) {
  StringSource src(Record("a") + Record(std::string(300, 'b')) + Record(""));
  TfRecordReader r;
  auto got = ReadAll(r, src);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], "a");
  EXPECT_EQ(got[1].size(), 300u);
  EXPECT_EQ(got[2], "");
  EXPECT_EQ(r.offset(), src.Size());
}

TEST(TfRecordReader, WaitsForAPartialRecordThenContinues) {
  std::string rec2 = Record("second");
  StringSource src(Record("first") + rec2.substr(0, 7));
  TfRecordReader r;
  EXPECT_EQ(ReadAll(r, src), (std::vector<std::string>{"first"}));
  src.data() += rec2.substr(7, 10);  // still incomplete
  EXPECT_TRUE(ReadAll(r, src).empty());
  src.data() += rec2.substr(17) + Record("third");
  EXPECT_EQ(ReadAll(r, src), (std::vector<std::string>{"second", "third"}));
  EXPECT_EQ(r.stats().corrupt, 0u);
}

TEST(TfRecordReader, ResyncsAfterCorruptionAndCountsIt) {
  std::string a = Record("alpha"), b = Record("bravo-bravo"), c = Record("charlie");
  std::string bytes = a + b + c;
  bytes[a.size() + 14] ^= 0x40;  // flip a data byte of "bravo": data CRC fails
  StringSource src(bytes);
  TfRecordReader r;
  EXPECT_EQ(ReadAll(r, src), (std::vector<std::string>{"alpha", "charlie"}));
  EXPECT_EQ(r.stats().corrupt, 1u);
  EXPECT_GE(r.stats().resyncs, 1u);
}

TEST(TfRecordReader, CorruptLengthIsCaughtByTheLengthCrc) {
  std::string a = Record("alpha"), b = Record("bravo");
  std::string bytes = a + b;
  bytes[a.size() + 1] = '\x7f';  // absurd length
  StringSource src(bytes + Record("charlie"));
  TfRecordReader r;
  EXPECT_EQ(ReadAll(r, src), (std::vector<std::string>{"alpha", "charlie"}));
}

TEST(TfRecordReader, TailStartsMidFileAndFindsTheNextBoundary) {
  std::string bytes;
  for (int i = 0; i < 200; ++i) bytes += Record("record-" + std::to_string(i) + std::string(40, 'x'));
  StringSource src(bytes);
  TfRecordReader::Options o;
  o.tail_bytes = 1000;  // lands inside a record
  TfRecordReader r(o);
  auto got = ReadAll(r, src);
  ASSERT_FALSE(got.empty());
  EXPECT_LT(got.size(), 20u);
  EXPECT_EQ(got.back().substr(0, 11), "record-199x");
  EXPECT_EQ(got.front().substr(0, 7), "record-");  // a real boundary, not garbage
}

TEST(TfRecordReader, SkipsOversizedRecordsUnread) {
  StringSource src(Record("small") + Record(std::string(200000, 'g')) + Record("after"));
  TfRecordReader r;
  EXPECT_EQ(ReadAll(r, src), (std::vector<std::string>{"small", "after"}));
  EXPECT_EQ(r.stats().skipped_large, 1u);
}

TEST(TfRecordReader, TruncatedFileStartsOver) {
  StringSource src(Record("one") + Record("two"));
  TfRecordReader r;
  EXPECT_EQ(ReadAll(r, src).size(), 2u);
  src.data() = Record("new");
  EXPECT_EQ(ReadAll(r, src), (std::vector<std::string>{"new"}));
}

TEST(ExporterTfEvent, DecodesSimpleValuesAndScalarTensors) {
  std::string rec = Event(1700000000.25, 42,
                          {SimpleValue("learning/loss", 2.5f), TensorValue("perf/step_time_seconds", 5.5),
                           TensorValue("hist", 1.0, "histograms"), SimpleValue("config/text_summary", 1.0f)});
  TfEvent ev;
  ASSERT_TRUE(DecodeTfEvent(rec, &ev));
  EXPECT_DOUBLE_EQ(ev.wall_time, 1700000000.25);
  EXPECT_EQ(ev.step, 42);
  ASSERT_EQ(ev.scalars.size(), 2u);
  EXPECT_EQ(ev.scalars[0].first, "learning/loss");
  EXPECT_DOUBLE_EQ(ev.scalars[0].second, 2.5);
  EXPECT_EQ(ev.scalars[1].first, "perf/step_time_seconds");
  EXPECT_DOUBLE_EQ(ev.scalars[1].second, 5.5);
  ASSERT_TRUE(DecodeTfEvent(FileVersionEvent(1.0), &ev));
  EXPECT_TRUE(ev.scalars.empty());
  EXPECT_FALSE(DecodeTfEvent(std::string("\x0a\xff\xff\xff\x0f", 5), &ev));  // length past the end
}

TEST(ExporterTfEvent, MetricNames) {
  EXPECT_EQ(TbMetricName("learning/loss"), "tb_learning_loss");
  EXPECT_EQ(TbMetricName("perf/per_device_tokens_per_sec"), "tb_perf_per_device_tokens_per_sec");
  EXPECT_EQ(TbMetricName("a-b.c d/é"), "tb_a_b_c_d___");
}

// Bounded random-input test with a fixed seed: random bytes, and valid streams with
// random mutations, fed in random chunks. Nothing may crash, and every delivered record
// must be one that was written (the CRCs make accidental acceptance practically
// impossible).
TEST(TfRecordFuzz, RandomAndMutatedStreamsNeverCrashOrInventRecords) {
  std::mt19937_64 rng(5);
  size_t delivered = 0;
  for (int iter = 0; iter < 100000; ++iter) {
    std::string bytes;
    std::vector<std::string> written;
    if (iter % 3 == 0) {
      size_t n = rng() % 200;
      for (size_t i = 0; i < n; ++i) bytes += static_cast<char>(rng());
    } else {
      int records = 1 + static_cast<int>(rng() % 5);
      for (int i = 0; i < records; ++i) {
        std::string d = Event(1.7e9 + i, i, {SimpleValue("t" + std::to_string(rng() % 100), 1.0f)});
        written.push_back(d);
        bytes += Record(d);
      }
      int edits = static_cast<int>(rng() % 4);
      for (int e = 0; e < edits && !bytes.empty(); ++e) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    TfRecordReader::Options o;
    o.tail_bytes = 16 + rng() % 400;
    TfRecordReader r(o);
    StringSource src("");
    size_t pos = 0;
    while (pos < bytes.size()) {
      size_t chunk = 1 + rng() % 64;
      src.data() += bytes.substr(pos, chunk);
      pos += chunk;
      r.Poll(src, [&](std::string_view d) {
        ++delivered;
        TfEvent ev;
        (void)DecodeTfEvent(d, &ev);  // must not crash on anything
        if (iter % 3 != 0) {
          bool known = false;
          for (const auto& w : written) known |= (w == d);
          ASSERT_TRUE(known);
        }
      });
    }
    TfEvent ev;
    (void)DecodeTfEvent(bytes, &ev);
  }
  EXPECT_GT(delivered, 10000u);
}

}  // namespace
}  // namespace mt::exporter
