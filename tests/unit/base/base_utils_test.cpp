// The small shared utilities of base/: one implementation each for every layer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/atomic_file.h"
#include "base/hostlist.h"
#include "base/iso_time.h"
#include "base/sha256.h"
#include "base/strings.h"

namespace mt::base {
namespace {

TEST(Sha256Hex, KnownDigests) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Trim, AsciiSpaceByDefaultOrTheGivenSet) {
  EXPECT_EQ(Trim("  RUNNING\r\n"), "RUNNING");
  EXPECT_EQ(Trim(" \t\n"), "");
  EXPECT_EQ(Trim("\ta b \v"), "a b");
  EXPECT_EQ(Trim(" x\r", " \t"), "x\r");
}

TEST(HostList, ExpandsWhatSlurmPrintsAndCompactsBack) {
  EXPECT_EQ(*ExpandHostList("chi[2845-2847,2865]"), (std::vector<std::string>{"chi2845", "chi2846", "chi2847", "chi2865"}));
  EXPECT_EQ(*ExpandHostList("node[001-002],gpu5"), (std::vector<std::string>{"node001", "node002", "gpu5"}));
  EXPECT_FALSE(ExpandHostList("a[1-5]", 3));
  std::vector<std::string> hosts;
  ASSERT_TRUE(ExpandHostList("node[001-003,010]", &hosts));
  EXPECT_EQ(CompactHostList(hosts), "node[001-003,010]");
  EXPECT_FALSE(ExpandHostList("a,,b", &hosts));
}

TEST(IsoTime, RoundTrips) {
  EXPECT_EQ(FormatIso8601(*ParseIso8601("2026-02-24T19:06:00Z")), "2026-02-24T19:06:00Z");
  EXPECT_EQ(*ParseIso8601("2026-02-24T20:06:00+01:00"), *ParseIso8601("2026-02-24T19:06:00Z"));
}

TEST(WriteFileAtomic, ReplacesWholeAndLeavesNoTemp) {
  const auto dir = std::filesystem::temp_directory_path() / ("mt-atomic-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WriteFileAtomic(dir / "f", "one").ok());
  ASSERT_TRUE(WriteFileAtomic(dir / "f", "two", {.mode = 0600, .durable = true}).ok());
  std::ifstream in(dir / "f");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "two");
  size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) entries += e.path().filename() == "f" ? 0 : 1;
  EXPECT_EQ(entries, 0u);
  const Status st = WriteFileAtomic(dir / "missing" / "f", "x");
  EXPECT_EQ(st.code(), FileErrc::kNotFound);
  EXPECT_NE(st.message().find("cannot create"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mt::base
