// gmock matchers for base::Status / base::Result (base/status.h), shared by every unit test:
//   EXPECT_THAT(store.Decide(...), IsOk());
//   EXPECT_THAT(BuildPlan(r, &p), StatusIs(Errc::kInvalid, HasSubstr("unknown backend")));
// A failure prints the code and the message, not just "false".
#pragma once
#include <gmock/gmock.h>

#include <ostream>
#include <string>

#include "base/status.h"

namespace mt::base {

inline const char* ErrcName(Errc c) {
  switch (c) {
    case Errc::kOk: return "kOk";
    case Errc::kNotFound: return "kNotFound";
    case Errc::kNotRegular: return "kNotRegular";
    case Errc::kNotDirectory: return "kNotDirectory";
    case Errc::kEscapes: return "kEscapes";
    case Errc::kLoop: return "kLoop";
    case Errc::kTooLarge: return "kTooLarge";
    case Errc::kTooMany: return "kTooMany";
    case Errc::kPermission: return "kPermission";
    case Errc::kIo: return "kIo";
    case Errc::kInvalid: return "kInvalid";
    case Errc::kConflict: return "kConflict";
    case Errc::kFailed: return "kFailed";
  }
  return "?";
}
// gtest finds these by argument-dependent lookup when it prints a value.
inline void PrintTo(Errc c, std::ostream* os) { *os << ErrcName(c); }
inline void PrintTo(const Status& s, std::ostream* os) {
  *os << ErrcName(s.code()) << (s.ok() ? "" : ": " + s.message());
}

namespace testing_matchers {

MATCHER(IsOk, "is ok") {
  if (!arg.ok()) *result_listener << ErrcName(arg.code()) << ": " << arg.message();
  return arg.ok();
}

MATCHER_P2(StatusIs, code, message_matcher,
           std::string("has code ") + ErrcName(code) + " and a message that " +
               ::testing::DescribeMatcher<std::string>(message_matcher)) {
  *result_listener << ErrcName(arg.code()) << ": \"" << arg.message() << "\"";
  return arg.code() == code && ::testing::Matches(message_matcher)(arg.message());
}

}  // namespace testing_matchers
}  // namespace mt::base

namespace mt::testing_status {
using base::testing_matchers::IsOk;
using base::testing_matchers::StatusIs;
}  // namespace mt::testing_status
