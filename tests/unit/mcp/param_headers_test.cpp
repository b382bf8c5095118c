// Custom headers from tool parameters (x-mcp-header → Mcp-Param-*), and the strict Base64
// they may use.
#include "mcp/param_headers.h"

#include <gtest/gtest.h>

#include <map>

#include "mcp/base64.h"
#include "mcp/json_rpc.h"

namespace mt::mcp {
namespace {

const Json kSchema = Json::parse(R"({
  "type": "object",
  "properties": {
    "region": {"type": "string", "x-mcp-header": "Region"},
    "count": {"type": "integer", "x-mcp-header": "Count"},
    "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
    "target": {"type": "object", "properties": {"job": {"type": "string", "x-mcp-header": "Job"}}},
    "ratio": {"type": "number", "x-mcp-header": "Ratio"},
    "list": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}},
    "any": {"anyOf": [{"type": "string", "x-mcp-header": "Any"}]},
    "bad": {"type": "string", "x-mcp-header": "Bad Name"},
    "dup1": {"type": "string", "x-mcp-header": "Twice"},
    "dup2": {"type": "string", "x-mcp-header": "twice"},
    "plain": {"type": "string"}
  }
})");

TEST(ParamHeadersTest, OnlyValidStaticallyReachableAnnotationsCount) {
  std::map<std::string, std::string> found;
  for (const auto& h : ParamHeaders(kSchema)) {
    std::string path;
    for (const auto& k : h.path) path += (path.empty() ? "" : ".") + k;
    found[h.name] = path;
  }
  std::map<std::string, std::string> want = {
      {"Region", "region"}, {"Count", "count"}, {"Dry-Run", "dry"}, {"Job", "target.job"}};
  EXPECT_EQ(found, want);   // not number, items, anyOf, a non-token name, nor a duplicate
}

struct Headers {
  std::map<std::string, std::string> h;
  std::function<std::optional<std::string>(const std::string&)> fn() const {
    return [this](const std::string& n) -> std::optional<std::string> {
      auto it = h.find(n);
      if (it == h.end()) return std::nullopt;
      return it->second;
    };
  }
};

// The RpcError code CheckParamHeaders throws (0 when it accepts).
int Check(const Json& args, std::map<std::string, std::string> headers) {
  Headers h{std::move(headers)};
  try {
    CheckParamHeaders(kSchema, args, h.fn());
  } catch (const RpcError& e) {
    return e.code();
  }
  return 0;
}

TEST(ParamHeadersTest, HeaderMustMatchTheBody) {
  EXPECT_EQ(Check({{"region", "us-west1"}}, {{"Mcp-Param-Region", "us-west1"}}), 0);
  EXPECT_EQ(Check({{"region", "us-west1"}}, {{"Mcp-Param-Region", "eu-west1"}}), kHeaderMismatch);
  EXPECT_EQ(Check({{"region", "us-west1"}}, {{"Mcp-Param-Region", "US-WEST1"}}), kHeaderMismatch);   // values are case-sensitive
  EXPECT_EQ(Check({{"target", {{"job", "4242"}}}}, {{"Mcp-Param-Job", "4242"}}), 0);
  EXPECT_EQ(Check({{"target", {{"job", "4242"}}}}, {{"Mcp-Param-Job", "4243"}}), kHeaderMismatch);
}

TEST(ParamHeadersTest, MissingHeaderWithTheValueInTheBodyIsRejected) {
  EXPECT_EQ(Check({{"region", "us-west1"}}, {}), kHeaderMismatch);
  EXPECT_EQ(Check({{"region", nullptr}}, {}), 0);   // null: no header expected
  EXPECT_EQ(Check(Json::object(), {}), 0);          // absent: no header expected
  EXPECT_EQ(Check({{"plain", "x"}}, {}), 0);        // not annotated
  EXPECT_EQ(Check(Json::object(), {{"Mcp-Param-Region", "us-west1"}}), kHeaderMismatch);   // header without a value
}

TEST(ParamHeadersTest, Base64SentinelIsDecodedAndMustBeValid) {
  EXPECT_EQ(Check({{"region", "Hello"}}, {{"Mcp-Param-Region", "=?base64?SGVsbG8=?="}}), 0);
  EXPECT_EQ(Check({{"region", "Hello, 世界"}}, {{"Mcp-Param-Region", "=?base64?SGVsbG8sIOS4lueVjA==?="}}), 0);
  EXPECT_EQ(Check({{"region", "Hello"}}, {{"Mcp-Param-Region", "=?base64?SGVsbG8?=" }}), kHeaderMismatch);    // padding
  EXPECT_EQ(Check({{"region", "Hello"}}, {{"Mcp-Param-Region", "=?base64?SGVs!!!bG8=?="}}), kHeaderMismatch);  // alphabet
  // Without the exact wrapper a value is literal.
  EXPECT_EQ(Check({{"region", "SGVsbG8="}}, {{"Mcp-Param-Region", "SGVsbG8="}}), 0);
  EXPECT_EQ(Check({{"region", "=?base64?SGVsbG8="}}, {{"Mcp-Param-Region", "=?base64?SGVsbG8="}}), 0);
  EXPECT_EQ(Check({{"region", "Hello"}}, {{"Mcp-Param-Region", "=?BASE64?SGVsbG8=?="}}), kHeaderMismatch);
}

TEST(ParamHeadersTest, InvalidCharactersAreRejected) {
  EXPECT_EQ(Check({{"region", "a\x01" "b"}}, {{"Mcp-Param-Region", "a\x01" "b"}}), kHeaderMismatch);
  EXPECT_EQ(Check({{"region", "é"}}, {{"Mcp-Param-Region", "é"}}), kHeaderMismatch);   // non-ASCII must be Base64
  EXPECT_EQ(Check({{"region", "a\tb"}}, {{"Mcp-Param-Region", "a\tb"}}), 0);
}

TEST(ParamHeadersTest, IntegersCompareNumericallyBooleansLowercase) {
  EXPECT_EQ(Check({{"count", 42}}, {{"Mcp-Param-Count", "42"}}), 0);
  EXPECT_EQ(Check({{"count", 42}}, {{"Mcp-Param-Count", "42.0"}}), 0);
  EXPECT_EQ(Check({{"count", -7}}, {{"Mcp-Param-Count", "-7"}}), 0);
  EXPECT_EQ(Check({{"count", 42}}, {{"Mcp-Param-Count", "43"}}), kHeaderMismatch);
  EXPECT_EQ(Check({{"count", 42}}, {{"Mcp-Param-Count", "42abc"}}), kHeaderMismatch);
  EXPECT_EQ(Check({{"dry", true}}, {{"Mcp-Param-Dry-Run", "true"}}), 0);
  EXPECT_EQ(Check({{"dry", false}}, {{"Mcp-Param-Dry-Run", "False"}}), kHeaderMismatch);
}

TEST(Base64StrictTest, NeedsPaddingAndTheStandardAlphabet) {
  EXPECT_EQ(Base64DecodeStrict("SGVsbG8="), "Hello");
  EXPECT_EQ(Base64DecodeStrict(""), "");
  EXPECT_FALSE(Base64DecodeStrict("SGVsbG8"));
  EXPECT_FALSE(Base64DecodeStrict("SGVs!!!bG8="));
  EXPECT_FALSE(Base64DecodeStrict("SG=sbG8="));
  EXPECT_FALSE(Base64DecodeStrict("SGVsbG8-"));   // base64url is not the header alphabet
  EXPECT_FALSE(Base64DecodeStrict("S==="));
}

}  // namespace
}  // namespace mt::mcp
