#include "mcp/json_parse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mt::mcp {
namespace {

using ::testing::HasSubstr;

std::string Nested(size_t depth, char open = '[', char close = ']') {
  return std::string(depth, open) + std::string(depth, close);
}

TEST(ParseUntrustedJson, ParsesOrdinaryMessages) {
  auto r = ParseUntrustedJson(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"a":[1,{"b":null}]}})");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.value["params"]["a"][1]["b"], nullptr);
}

TEST(ParseUntrustedJson, DepthUpToTheLimitIsFineAndOneMoreIsRefused) {
  EXPECT_TRUE(ParseUntrustedJson(Nested(64)).ok());
  auto r = ParseUntrustedJson(Nested(65));
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r.error, HasSubstr("nested deeper than 64 levels"));
  EXPECT_TRUE(r.value.is_null());
}

TEST(ParseUntrustedJson, HundredsOfThousandsOfNestedArraysDoNotTouchTheStack) {
  // The finding: ~150,000 nested arrays (300 KB) crashed the server when copied.
  auto r = ParseUntrustedJson(Nested(150'000));
  EXPECT_FALSE(r.ok());
  std::string objects;
  for (int i = 0; i < 100'000; ++i) objects += "{\"a\":";
  objects += "1" + std::string(100'000, '}');
  EXPECT_THAT(ParseUntrustedJson(objects).error, HasSubstr("nested deeper"));
}

TEST(ParseUntrustedJson, DuplicateKeysAreRefusedAtEveryLevel) {
  auto r = ParseUntrustedJson(R"({"params":{"name":"list_jobs","name":"submit_job"}})");
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(r.error, HasSubstr("duplicate object key \"name\""));
  EXPECT_FALSE(ParseUntrustedJson(R"({"id":1,"id":2})").ok());
  // The same key in sibling objects is fine.
  EXPECT_TRUE(ParseUntrustedJson(R"([{"name":1},{"name":2}])").ok());
}

TEST(ParseUntrustedJson, SizeAndSyntaxErrorsSaySo) {
  JsonLimits small{16, 64};
  EXPECT_THAT(ParseUntrustedJson(R"({"text":"0123456789abcdef"})", small).error, HasSubstr("over the limit of 16 bytes"));
  EXPECT_THAT(ParseUntrustedJson(R"({"a":)").error, HasSubstr("syntax error at byte"));
  EXPECT_FALSE(ParseUntrustedJson("{\"a\":\"\xff\"}").ok());   // not UTF-8
}

}  // namespace
}  // namespace mt::mcp
