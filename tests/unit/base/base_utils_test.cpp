// The small shared utilities of base/: one implementation each for every layer.
#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <fstream>
#include <sstream>

#include "base/atomic_file.h"
#include "base/hostlist.h"
#include "base/iso_time.h"
#include "base/sha256.h"
#include "base/strings.h"
#include "tests/unit/status_matchers.h"

namespace mt::base {
namespace {
using ::testing::HasSubstr;
using testing_matchers::IsOk;
using testing_matchers::StatusIs;

TEST(Status, InPrefixesContextAndKeepsTheCode) {
  EXPECT_THAT(Status::Ok().In("ctx"), IsOk());
  EXPECT_EQ(Status::Ok().In("ctx").message(), "");
  const Status st = Status(Errc::kConflict, "plan p is approved, not pending").In("approving p");
  EXPECT_THAT(st, StatusIs(Errc::kConflict, ::testing::Eq("approving p: plan p is approved, not pending")));
}

TEST(Status, StatusOfMapsFilesystemErrors) {
  std::error_code ec;
  std::filesystem::create_directory("/nonexistent-mt-dir/child", ec);
  ASSERT_TRUE(ec);
  EXPECT_THAT(StatusOf(ec, "cannot create /nonexistent-mt-dir/child"),
              StatusIs(Errc::kNotFound, HasSubstr("cannot create /nonexistent-mt-dir/child: ")));
  EXPECT_THAT(StatusOf(std::make_error_code(std::errc::permission_denied), "x"), StatusIs(Errc::kPermission, HasSubstr("x: ")));
  // A code from another category (or errno 0) is never reported as ok.
  EXPECT_THAT(StatusOf(std::make_error_code(std::future_errc::no_state), "y"), StatusIs(Errc::kIo, HasSubstr("y: ")));
}

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
  EXPECT_EQ(st.code(), Errc::kNotFound);
  EXPECT_NE(st.message().find("cannot create"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mt::base
