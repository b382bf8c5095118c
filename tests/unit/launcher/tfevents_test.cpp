#include <gtest/gtest.h>

#include <sstream>

#include "launcher/sim/crc32c.h"
#include "launcher/sim/tfevents_writer.h"
#include "tests/unit/status_matchers.h"
#include "tests/unit/launcher/test_util.h"

namespace mt::launch::sim {
namespace {
using ::testing::HasSubstr;
using base::Errc;
using testing_status::IsOk;
using testing_status::StatusIs;

using test::DecodedEvent;

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);              // the standard check value
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);     // RFC 3720 B.4: 32 bytes of zeros
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62A8AB43u);   // RFC 3720 B.4: 32 bytes of 0xFF
  EXPECT_EQ(Crc32c(""), 0u);
}

std::string FixtureBytes() {
  const std::string text = test::ReadAll(std::string(MT_LAUNCHER_FIXTURES) + "/scalar_event.tfrecord.hex");
  std::string bytes;
  for (const auto& line : test::Lines(text)) {
    std::stringstream ss(line.substr(0, line.find('#')));
    std::string hex;
    while (ss >> hex) bytes.push_back(static_cast<char>(std::stoi(hex, nullptr, 16)));
  }
  return bytes;
}

TEST(TfEvents, EncoderMatchesHandCheckedFixture) {
  const std::string expected = FixtureBytes();
  ASSERT_EQ(expected.size(), 24u + 16 + 35 + 16);
  const std::string got = FrameRecord(EncodeFileVersionEvent(1.5)) +
                          FrameRecord(EncodeScalarEvent(2.25, 7, "learning/loss", 0.5f));
  EXPECT_EQ(got, expected);
}

TEST(TfEvents, IndependentDecoderReadsFixture) {
  std::vector<DecodedEvent> events;
  std::string err;
  ASSERT_TRUE(test::DecodeEventFile(FixtureBytes(), &events, &err)) << err;
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  EXPECT_EQ(events[0].wall_time, 1.5);
  EXPECT_EQ(events[1].step, 7);
  ASSERT_EQ(events[1].values.size(), 1u);
  EXPECT_EQ(events[1].values[0].first, "learning/loss");
  EXPECT_EQ(events[1].values[0].second, 0.5f);
}

TEST(TfEvents, DecoderRejectsCorruption) {
  std::string bytes = FixtureBytes();
  bytes[30] ^= 1;  // a payload byte of record 1
  std::vector<DecodedEvent> events;
  std::string err;
  EXPECT_FALSE(test::DecodeEventFile(bytes, &events, &err));
  EXPECT_NE(err.find("CRC"), std::string::npos);
}

TEST(TfEvents, WriterRoundTripsManyScalars) {
  test::ScratchDir dir;
  const auto path = dir.path() / EventFileName(1770000000, "chi2801");
  EXPECT_EQ(path.filename(), "events.out.tfevents.1770000000.chi2801");
  TfEventWriter w;
  ASSERT_THAT(w.Open(path, 1770000000.0), IsOk());
  for (int64_t step = 0; step < 300; ++step) {
    ASSERT_THAT(w.AddScalar(1770000000.0 + step, step, "perf/per_device_tokens_per_sec", 3000.0f + step), IsOk());
    ASSERT_THAT(w.AddScalar(1770000000.0 + step, step, "learning/loss", 10.0f / (1 + step)), IsOk());
  }
  ASSERT_THAT(w.Close(), IsOk());
  std::vector<DecodedEvent> events;
  std::string err;
  ASSERT_TRUE(test::DecodeEventFile(test::ReadAll(path), &events, &err)) << err;
  ASSERT_EQ(events.size(), 601u);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  EXPECT_EQ(events[2 * 200 + 1].step, 200);  // steps > 127 need a two-byte varint
  EXPECT_EQ(events[2 * 200 + 1].values[0].second, 3200.0f);
  EXPECT_EQ(events[600].values[0].first, "learning/loss");
  EXPECT_FLOAT_EQ(events[600].values[0].second, 10.0f / 300);
}

TEST(TfEvents, OpenReportsUnwritablePath) {
  TfEventWriter w;
  EXPECT_THAT(w.Open("/nonexistent-dir/x/events.out.tfevents.1.h", 1),
              StatusIs(Errc::kIo, HasSubstr("cannot create event file")));
  EXPECT_THAT(w.AddScalar(1, 1, "a", 1), StatusIs(Errc::kInvalid, HasSubstr("not open")));
}

}  // namespace
}  // namespace mt::launch::sim
