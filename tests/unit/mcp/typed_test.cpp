// mcp/typed.h: one field list per struct gives the schema, the encoding and the decoding,
// and they agree (the encoding of every value validates against the generated schema).
#include "mcp/typed.h"

#include <gtest/gtest.h>

#include "mcp/local_call.h"
#include "mcp/schema_validator.h"

namespace mt::mcp {
namespace {

struct Line {
  int64_t line = 0;
  std::string text;
  Nullable<int64_t> rank;
  template <class F>
  static void Fields(F& f) {
    f("line", &Line::line, {.description = "1-based", .minimum = 1});
    f("text", &Line::text);
    f("rank", &Line::rank);
  }
};

struct Answer {
  std::string state;
  Nullable<std::string> kind;
  std::vector<Line> lines;
  std::optional<int64_t> extra;
  std::map<std::string, double> totals;
  Json details;
  Nullable<Line> first;
  template <class F>
  static void Fields(F& f) {
    f("state", &Answer::state, {.one_of = {"ok", "bad"}});
    f("kind", &Answer::kind, {.one_of = {"a", "b"}});
    f("lines", &Answer::lines, {.max_items = 3});
    f("extra", &Answer::extra);
    f("totals", &Answer::totals);
    f("details", &Answer::details, {.schema = Json{{"type", "object"}}});
    f("first", &Answer::first);
  }
};

struct Input {
  std::string job;
  std::string detail = "summary";
  std::optional<int64_t> rank;
  template <class F>
  static void Fields(F& f) {
    f("job", &Input::job, {.min_length = 1, .max_length = 8});
    f("detail", &Input::detail, {.one_of = {"summary", "full"}, .default_value = "summary"});
    f("rank", &Input::rank, {.minimum = 0, .maximum = 9});
  }
};

TEST(Typed, SchemaFollowsMemberTypesAndSpecs) {
  Json s = SchemaOf<Answer>();
  EXPECT_EQ(s["type"], "object");
  EXPECT_EQ(s["additionalProperties"], false);
  EXPECT_EQ(s["required"], Json({"state", "kind", "lines", "totals", "details", "first"}));   // not `extra`
  EXPECT_EQ(s["properties"]["state"], Json({{"enum", {"ok", "bad"}}}));
  EXPECT_EQ(s["properties"]["kind"]["enum"], Json({"a", "b", nullptr}));
  EXPECT_EQ(s["properties"]["lines"]["maxItems"], 3);
  EXPECT_EQ(s["properties"]["lines"]["items"]["properties"]["rank"]["type"], Json({"integer", "null"}));
  EXPECT_EQ(s["properties"]["lines"]["items"]["properties"]["line"]["minimum"], 1);
  EXPECT_EQ(s["properties"]["totals"]["additionalProperties"]["type"], "number");
  EXPECT_EQ(s["properties"]["details"], Json({{"type", "object"}}));
  EXPECT_EQ(s["properties"]["first"]["type"], Json({"object", "null"}));
  EXPECT_EQ(s["properties"]["extra"]["type"], "integer");
}

TEST(Typed, EncodingConformsToSchemaAndRoundTrips) {
  Answer a;
  a.state = "ok";
  a.lines = {{3, "x", 1}, {4, "y", std::nullopt}};
  a.totals = {{"t", 1.5}};
  a.details = Json{{"k", 1}};
  Json j = Encode(a);
  EXPECT_FALSE(j.contains("extra"));
  EXPECT_TRUE(j["kind"].is_null());
  EXPECT_TRUE(j["first"].is_null());
  EXPECT_TRUE(j["lines"][1]["rank"].is_null());
  EXPECT_EQ(ValidateSchema(SchemaOf<Answer>(), j), std::nullopt);
  a.extra = 7;
  a.first = Line{1, "z", 0};
  a.kind = "b";
  j = Encode(a);
  EXPECT_EQ(ValidateSchema(SchemaOf<Answer>(), j), std::nullopt);
  Answer back = Decode<Answer>(j);
  EXPECT_EQ(Encode(back), j);
  // The schema is strict: a wrong enum value or an unknown field does not pass.
  j["state"] = "maybe";
  EXPECT_NE(ValidateSchema(SchemaOf<Answer>(), j), std::nullopt);
  j["state"] = "ok";
  j["surprise"] = 1;
  EXPECT_NE(ValidateSchema(SchemaOf<Answer>(), j), std::nullopt);
}

TEST(Typed, InputDefaultsAreNotRequiredAndKeepInitializers) {
  Json s = SchemaOf<Input>();
  EXPECT_EQ(s["required"], Json({"job"}));
  EXPECT_EQ(s["properties"]["detail"]["default"], "summary");
  EXPECT_EQ(s["properties"]["job"]["maxLength"], 8);
  Input in = Decode<Input>(Json{{"job", "7877"}});
  EXPECT_EQ(in.detail, "summary");
  EXPECT_FALSE(in.rank.has_value());
  in = Decode<Input>(Json{{"job", "7877"}, {"detail", "full"}, {"rank", 3}});
  EXPECT_EQ(in.detail, "full");
  EXPECT_EQ(in.rank, 3);
}

Tool EchoTool() {
  return MakeTypedTool<Input, Line>(
      ToolInfo{.name = "echo", .title = "Echo", .description = "echoes", .annotations = ToolAnnotations::ReadOnly()},
      [](const Input& in, CallContext&) -> Line {
        if (in.job == "boom") throw std::runtime_error("no such job");
        if (in.job == "rpc") throw RpcError(kInvalidParams, "protocol");
        if (in.job == "bad") return Line{0, "line 0 breaks minimum 1", std::nullopt};
        return Line{in.rank.value_or(0) + 1, in.job + "/" + in.detail, in.rank};
      },
      [](const Line& l) { return l.text; });
}

TEST(Typed, TypedToolValidatesRunsAndReportsErrors) {
  Tool t = EchoTool();
  EXPECT_EQ(t.input_schema, SchemaOf<Input>());
  EXPECT_EQ(t.output_schema, SchemaOf<Line>());
  ToolResult r = CallToolLocally(t, Json{{"job", "j1"}, {"rank", 2}});
  ASSERT_FALSE(r.is_error);
  EXPECT_EQ(*r.structured, Json({{"line", 3}, {"text", "j1/summary"}, {"rank", 2}}));
  EXPECT_EQ(r.content[0]["text"], "j1/summary");
  r = CallToolLocally(t, Json{{"job", "j1"}, {"rank", 10}});
  ASSERT_TRUE(r.is_error);
  EXPECT_NE(r.content[0]["text"].get<std::string>().find("Invalid arguments: arguments.rank"), std::string::npos);
  r = CallToolLocally(t, Json{{"job", "boom"}});
  ASSERT_TRUE(r.is_error);
  EXPECT_EQ(r.content[0]["text"], "echo: no such job");
  r = CallToolLocally(t, Json{{"job", "bad"}});   // output checked like the dispatcher does
  ASSERT_TRUE(r.is_error);
  EXPECT_NE(r.content[0]["text"].get<std::string>().find("violates its outputSchema"), std::string::npos);
  LocalCallContext ctx;
  EXPECT_THROW(t.handler(Json{{"job", "rpc"}}, ctx), RpcError);   // protocol errors pass through
}

}  // namespace
}  // namespace mt::mcp
