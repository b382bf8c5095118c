#include "mcp/schema_validator.h"

#include <gtest/gtest.h>

namespace mt::mcp {
namespace {

std::string Check(const char* schema, const char* value) {
  auto e = ValidateSchema(Json::parse(schema), Json::parse(value), "arguments");
  return e.value_or("");
}

TEST(SchemaValidator, TypesAndTheOffendingField) {
  const char* s = R"({"type":"object","properties":{"nodes":{"type":"integer","minimum":1}},"required":["nodes"]})";
  EXPECT_EQ(Check(s, R"({"nodes":4})"), "");
  EXPECT_EQ(Check(s, R"({"nodes":4.0})"), "");   // 2020-12: 4.0 is an integer
  EXPECT_EQ(Check(s, R"({"nodes":"4"})"), "arguments.nodes: expected integer, got string");
  EXPECT_EQ(Check(s, R"({"nodes":4.5})"), "arguments.nodes: expected integer, got number");
  EXPECT_EQ(Check(s, R"({"nodes":0})"), "arguments.nodes: must be >= 1");
  EXPECT_EQ(Check(s, R"({})"), "arguments.nodes: required property is missing");
  EXPECT_EQ(Check(s, R"([])"), "arguments: expected object, got array");
}

TEST(SchemaValidator, AdditionalPropertiesNamesTheAllowedOnes) {
  const char* s = R"({"type":"object","properties":{"job":{"type":"string"},"now":{"type":"string"}},"additionalProperties":false})";
  EXPECT_EQ(Check(s, R"({"jbo":"x"})"), "arguments.jbo: unknown property (allowed: job, now)");
}

TEST(SchemaValidator, StringsEnumsAndPatterns) {
  const char* s = R"({"type":"object","properties":{
      "mode":{"enum":["discover","promql"]},
      "id":{"type":"string","pattern":"^[0-9]+$","minLength":2,"maxLength":4},
      "c":{"const":"x"}}})";
  EXPECT_EQ(Check(s, R"({"mode":"promql","id":"78"})"), "");
  EXPECT_NE(Check(s, R"({"mode":"hang"})").find("is not one of"), std::string::npos);
  EXPECT_NE(Check(s, R"({"id":"7a7"})").find("does not match pattern"), std::string::npos);
  EXPECT_NE(Check(s, R"({"id":"7"})").find("shorter than 2"), std::string::npos);
  EXPECT_NE(Check(s, R"({"id":"78777"})").find("longer than 4"), std::string::npos);
  EXPECT_NE(Check(s, R"({"c":"y"})").find("must be \"x\""), std::string::npos);
  // Length counts code points, not bytes.
  EXPECT_EQ(Check(R"({"type":"string","maxLength":2})", R"("é€")"), "");
}

TEST(SchemaValidator, ArraysAndNesting) {
  const char* s = R"({"type":"array","items":{"type":"object","properties":{"host":{"type":"string"}},"required":["host"]},"minItems":1,"maxItems":2,"uniqueItems":true})";
  EXPECT_EQ(Check(s, R"([{"host":"a"}])"), "");
  EXPECT_EQ(Check(s, R"([{"host":"a"},{"host":1}])"), "arguments[1].host: expected string, got integer");
  EXPECT_NE(Check(s, R"([])").find("at least 1"), std::string::npos);
  EXPECT_NE(Check(s, R"([{"host":"a"},{"host":"a"}])").find("unique"), std::string::npos);
  EXPECT_NE(Check(s, R"([{"host":"a"},{"host":"b"},{"host":"c"}])").find("at most 2"), std::string::npos);
}

TEST(SchemaValidator, CombinatorsRefsAndConditionals) {
  const char* s = R"({"$defs":{"pos":{"type":"number","exclusiveMinimum":0}},
     "type":"object","properties":{"a":{"$ref":"#/$defs/pos"},"kind":{"type":"string"},"phone":{"type":"string"},"email":{"type":"string"}},
     "allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],
     "if":{"properties":{"kind":{"const":"phone"}},"required":["kind"]},"then":{"required":["phone"]}})";
  EXPECT_EQ(Check(s, R"({"a":1,"email":"e"})"), "");
  EXPECT_NE(Check(s, R"({"a":0,"email":"e"})").find("must be > 0"), std::string::npos);
  EXPECT_NE(Check(s, R"({"a":1})").find("none of the allowed alternatives"), std::string::npos);
  EXPECT_NE(Check(s, R"({"kind":"phone","email":"e"})").find("phone: required"), std::string::npos);
  EXPECT_NE(Check(R"({"oneOf":[{"type":"number"},{"type":"integer"}]})", "3").find("exactly one"), std::string::npos);
  EXPECT_NE(Check(R"({"not":{"type":"null"}})", "null").find("must not match"), std::string::npos);
  EXPECT_NE(Check(R"({"$ref":"#/$defs/missing"})", "1").find("unresolvable $ref"), std::string::npos);
  // A recursive schema is cut off instead of overflowing the stack.
  EXPECT_NE(Check(R"({"$ref":"#"})", "1").find("too deep"), std::string::npos);
}

TEST(SchemaValidator, BooleanSchemasAndUnknownKeywords) {
  EXPECT_EQ(Check("true", "1"), "");
  EXPECT_NE(Check("false", "1"), "");
  EXPECT_EQ(Check(R"({"type":"string","format":"date-time","x-mcp-header":"X","description":"d"})", R"("not a date")"), "");
}

}  // namespace
}  // namespace mt::mcp
