#include "tools/logs/log_window.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace mt::tools {
namespace {

class LogWindowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string s;
    for (int i = 1; i <= 1000; ++i) s += std::to_string(i % 3) + ": line " + std::to_string(i) + (i == 500 ? " NCCL WARN Timeout" : "") + "\n";
    testing::WriteFile(path(), s);
  }
  std::filesystem::path path() const { return dir_.path() / "w.log"; }
  testing::TempDir dir_;
};

TEST_F(LogWindowTest, LineRanges) {
  WindowRequest r;
  r.lines = "10:12";
  Window w = ReadWindow(path(), r);
  ASSERT_EQ(w.lines.size(), 3u);
  EXPECT_EQ(w.lines[0].line, 10u);
  EXPECT_EQ(w.lines[0].text, "1: line 10");
  EXPECT_EQ(w.lines[0].rank, 1);
  r.lines = "-3:";
  w = ReadWindow(path(), r);
  ASSERT_EQ(w.lines.size(), 3u);
  EXPECT_EQ(w.lines[0].line, 998u);
  EXPECT_EQ(*w.total_lines, 1000u);
  r.lines = "990:";
  r.max_lines = 5;
  w = ReadWindow(path(), r);
  EXPECT_TRUE(w.truncated);
  EXPECT_EQ(w.resume, "995:");
}

TEST_F(LogWindowTest, RankAndGrepWithContext) {
  WindowRequest r;
  r.rank = 2;
  r.lines = "1:10";
  Window w = ReadWindow(path(), r);
  ASSERT_EQ(w.lines.size(), 3u);   // lines 2, 5, 8
  EXPECT_EQ(w.lines[1].line, 5u);
  EXPECT_EQ(w.lines[1].rank, 2);
  WindowRequest g;
  g.grep = "NCCL WARN (Timeout|error)";
  g.context = 2;
  w = ReadWindow(path(), g);
  ASSERT_EQ(w.lines.size(), 5u);
  EXPECT_EQ(w.lines[2].line, 500u);
  EXPECT_TRUE(w.lines[2].match);
  EXPECT_FALSE(w.lines[0].match);
  EXPECT_EQ(w.matches, 1u);
}

TEST_F(LogWindowTest, BudgetsAndBadRequests) {
  WindowRequest r;
  r.max_total_chars = 100;
  Window w = ReadWindow(path(), r);
  EXPECT_TRUE(w.truncated);
  EXPECT_LT(w.lines.size(), 10u);
  WindowRequest bad;
  bad.lines = "9:3";
  EXPECT_THROW(ReadWindow(path(), bad), std::invalid_argument);
  bad.lines = "x:";
  EXPECT_THROW(ReadWindow(path(), bad), std::invalid_argument);
  WindowRequest re;
  re.grep = "(unclosed";
  EXPECT_THROW(ReadWindow(path(), re), std::invalid_argument);
  EXPECT_THROW(ReadWindow(dir_.path() / "missing.log", WindowRequest{}), std::runtime_error);
}

TEST_F(LogWindowTest, LongLinesAreCut) {
  testing::WriteFile(path(), std::string(10000, 'x') + "\nshort\n");
  WindowRequest r;
  Window w = ReadWindow(path(), r);
  ASSERT_EQ(w.lines.size(), 2u);
  EXPECT_LT(w.lines[0].text.size(), 300u);
  EXPECT_NE(w.lines[0].text.find("more bytes"), std::string::npos);
}

}  // namespace
}  // namespace mt::tools
