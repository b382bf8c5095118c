#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "exporter/exposition_parser.h"
#include "tests/unit/exporter/test_util.h"

namespace mt::exporter {
namespace {

TEST(ParseExpositionLine, SampleWithLabelsValueAndTimestamp) {
  ExpositionLine l;
  std::string err;
  ASSERT_TRUE(ParseExpositionLine(R"(tb_learning_loss{host="n1",x="a\"b\\c\nd"} 7.25 1700000000123)", &l, &err)) << err;
  EXPECT_EQ(l.kind, LineKind::kSample);
  EXPECT_EQ(l.sample.name, "tb_learning_loss");
  ASSERT_EQ(l.sample.labels.size(), 2u);
  EXPECT_EQ(l.sample.labels[1].value, "a\"b\\c\nd");
  EXPECT_DOUBLE_EQ(l.sample.value, 7.25);
  EXPECT_TRUE(l.sample.has_timestamp);
  EXPECT_EQ(l.sample.timestamp_ms, 1700000000123);
}

TEST(ParseExpositionLine, SpecialValuesAndExponents) {
  ExpositionLine l;
  std::string err;
  ASSERT_TRUE(ParseExpositionLine("a NaN", &l, &err));
  EXPECT_TRUE(std::isnan(l.sample.value));
  ASSERT_TRUE(ParseExpositionLine("a +Inf", &l, &err));
  EXPECT_TRUE(std::isinf(l.sample.value) && l.sample.value > 0);
  ASSERT_TRUE(ParseExpositionLine("a -Inf", &l, &err));
  EXPECT_TRUE(l.sample.value < 0);
  ASSERT_TRUE(ParseExpositionLine("a 1.5e3", &l, &err));
  EXPECT_DOUBLE_EQ(l.sample.value, 1500);
  ASSERT_TRUE(ParseExpositionLine("a{} -2", &l, &err));
  EXPECT_DOUBLE_EQ(l.sample.value, -2);
  ASSERT_TRUE(ParseExpositionLine("a:b_c 1\r", &l, &err));
  EXPECT_EQ(l.sample.name, "a:b_c");
}

TEST(ParseExpositionLine, HelpTypeAndComments) {
  ExpositionLine l;
  std::string err;
  ASSERT_TRUE(ParseExpositionLine("# HELP hw_x Some help\\nmore", &l, &err));
  EXPECT_EQ(l.kind, LineKind::kHelp);
  EXPECT_EQ(l.text, "Some help\nmore");
  ASSERT_TRUE(ParseExpositionLine("# TYPE hw_x counter", &l, &err));
  EXPECT_EQ(l.kind, LineKind::kType);
  EXPECT_EQ(l.text, "counter");
  ASSERT_TRUE(ParseExpositionLine("# just a comment", &l, &err));
  EXPECT_EQ(l.kind, LineKind::kComment);
  ASSERT_TRUE(ParseExpositionLine("   ", &l, &err));
  EXPECT_EQ(l.kind, LineKind::kBlank);
}

TEST(ParseExpositionLine, RejectsMalformedLinesWithReasons) {
  const char* bad[] = {
      "1abc 1",                     // name starts with a digit
      "abc",                        // no value
      "abc one",                    // not a number
      "abc 1 2 3",                  // trailing garbage
      "abc 1 12.5",                 // non-integer timestamp
      "abc{host=\"x\" 1",           // unterminated label set
      "abc{host=x} 1",              // unquoted value
      "abc{host=\"x\",host=\"y\"} 1",  // duplicate label
      "abc{1h=\"x\"} 1",            // bad label name
      "abc{__name__=\"x\"} 1",      // reserved label
      "abc{a=\"\\q\"} 1",           // bad escape
      "abc 0x10",                   // hex is not accepted
      "abc 1e999",                  // overflow
      "abc inf1",
      "# TYPE abc bogus",
      "# TYPE 9abc gauge",
      "abc- 1",
      "abc 1 0",                    // epoch-0 timestamp
      "abc \xff",                   // invalid UTF-8
  };
  for (const char* line : bad) {
    ExpositionLine l;
    std::string err;
    EXPECT_FALSE(ParseExpositionLine(line, &l, &err)) << line;
    EXPECT_FALSE(err.empty()) << line;
  }
}

TEST(ParseExposition, BuildsTypedFamiliesAndDropsInvalidLines) {
  auto r = ParseExposition(
      "# HELP hw_gpu_power_watts GPU power\n"
      "# TYPE hw_gpu_power_watts gauge\n"
      "hw_gpu_power_watts{gpu=\"0\",host=\"n\"} 700.5\n"
      "hw_gpu_power_watts{gpu=\"1\",host=\"n\"} oops\n"
      "hw_gpu_power_watts{gpu=\"0\",host=\"n\"} 1\n"
      "# TYPE c_total counter\n"
      "c_total 5 1700000000000\n"
      "loose_metric 3\n"
      "# TYPE h histogram\n"
      "h_bucket{le=\"1\"} 1\n"
      "h 2\n");
  ASSERT_EQ(r.families.size(), 3u);
  EXPECT_EQ(r.families[0].name, "hw_gpu_power_watts");
  EXPECT_EQ(r.families[0].help, "GPU power");
  EXPECT_EQ(r.families[0].type, prometheus::MetricType::Gauge);
  ASSERT_EQ(r.families[0].metric.size(), 1u);
  EXPECT_DOUBLE_EQ(r.families[0].metric[0].gauge.value, 700.5);
  EXPECT_EQ(r.families[1].type, prometheus::MetricType::Counter);
  EXPECT_EQ(r.families[1].metric[0].timestamp_ms, 1700000000000);
  EXPECT_DOUBLE_EQ(r.families[1].metric[0].counter.value, 5);
  EXPECT_EQ(r.families[2].name, "loose_metric");
  EXPECT_EQ(r.families[2].type, prometheus::MetricType::Untyped);
  // oops value, duplicate series, the histogram TYPE and both of its samples.
  std::vector<size_t> lines;
  for (const auto& e : r.errors) lines.push_back(e.line_number);
  EXPECT_EQ(lines, (std::vector<size_t>{4, 5, 9, 10, 11}));
}

TEST(ParseExposition, TypeAfterSamplesIsAnError) {
  auto r = ParseExposition("x 1\n# TYPE x gauge\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].line_number, 2u);
}

// Bounded random-input test (fixed seed): no input may crash the parser, every line is
// either accepted or rejected with a reason, and what is accepted has valid names.
// Issue #14, finding 10: memory stays proportional to the series cap.
TEST(ParseExposition, KeepsAtMostMaxSeriesAndCountsTheRest) {
  std::string text = "# TYPE a gauge\n";
  for (int i = 0; i < 30; ++i) text += "a{i=\"" + std::to_string(i) + "\"} 1\n";
  for (int i = 0; i < 30; ++i) text += "fam_" + std::to_string(i) + " 1\n";
  text += "# HELP late_family only metadata\n";
  text += "garbage line\n";
  auto r = ParseExposition(text, 40);
  size_t kept = 0;
  for (const auto& f : r.families) kept += f.metric.size();
  EXPECT_EQ(kept, 40u);
  EXPECT_EQ(r.series_dropped, 20u);
  EXPECT_EQ(r.families.size(), 11u);  // "a" and fam_0..fam_9
  EXPECT_EQ(r.error_count, 1u);
  auto all = ParseExposition(text);
  EXPECT_EQ(all.series_dropped, 0u);
  EXPECT_EQ(all.families.size(), 31u);
}

TEST(ParseExposition, KeepsTheFirstErrorDetailsButCountsEveryInvalidLine) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "not a metric\n";
  auto r = ParseExposition(text);
  EXPECT_EQ(r.error_count, 1000u);
  EXPECT_EQ(r.errors.size(), kMaxErrorDetails);
  EXPECT_EQ(r.errors.front().line_number, 1u);
}

TEST(ParseExpositionFuzz, RandomAndMutatedInputsNeverCrash) {
  std::mt19937_64 rng(20261121);
  const std::string seeds[] = {
      "hw_gpu_power_watts{gpu=\"0\",host=\"n\"} 700.5 1700000000000",
      "# TYPE tb_step gauge", "# HELP a b\\\\c", "x{a=\"\\\"\"} -Inf", "# STATE abc|1|2",
  };
  const std::string alphabet = "abcxyz_:{}=\",.\\ #\t\n\r0123456789eE+-InfNaTYPEHLP\xff\xc3\xa9";
  size_t accepted = 0, rejected = 0;
  for (int i = 0; i < 100000; ++i) {
    std::string s;
    if (i % 2 == 0) {
      s = seeds[rng() % std::size(seeds)];
      int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits && !s.empty(); ++e) {
        size_t pos = rng() % s.size();
        switch (rng() % 3) {
          case 0: s[pos] = alphabet[rng() % alphabet.size()]; break;
          case 1: s.erase(pos, 1 + rng() % 3); break;
          default: s.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
        }
      }
    } else {
      size_t len = rng() % 64;
      for (size_t k = 0; k < len; ++k) s += static_cast<char>(rng() % 256);
    }
    ExpositionLine l;
    std::string err;
    if (ParseExpositionLine(s, &l, &err)) {
      ++accepted;
      if (l.kind == LineKind::kSample) {
        ASSERT_TRUE(IsValidMetricName(l.sample.name)) << s;
        for (const auto& lab : l.sample.labels) ASSERT_TRUE(IsValidLabelName(lab.name)) << s;
      }
    } else {
      ++rejected;
      ASSERT_FALSE(err.empty()) << s;
    }
    auto whole = ParseExposition(s + "\n" + s);
    for (const auto& f : whole.families) ASSERT_FALSE(f.metric.empty());
  }
  EXPECT_GT(accepted, 1000u);  // the mutations keep a fair share valid
  EXPECT_GT(rejected, 1000u);
}

}  // namespace
}  // namespace mt::exporter
