#include "mcp/json_rpc.h"

#include <gtest/gtest.h>

namespace mt::mcp {
namespace {

Message ClassifyOk(const char* text) {
  Json id;
  return Classify(Json::parse(text), &id);
}

int ClassifyCode(const char* text, Json* id = nullptr) {
  Json ignored;
  try {
    Classify(Json::parse(text), id ? id : &ignored);
  } catch (const RpcError& e) {
    return e.code();
  }
  return 0;
}

TEST(JsonRpc, ClassifiesRequestsNotificationsAndResponses) {
  auto r = ClassifyOk(R"({"jsonrpc":"2.0","id":7,"method":"tools/list"})");
  EXPECT_EQ(r.kind, MessageKind::kRequest);
  EXPECT_EQ(r.id, 7);
  EXPECT_TRUE(r.params.is_object());
  auto n = ClassifyOk(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  EXPECT_EQ(n.kind, MessageKind::kNotification);
  auto s = ClassifyOk(R"({"jsonrpc":"2.0","id":"mt-1","result":{"action":"accept"}})");
  EXPECT_EQ(s.kind, MessageKind::kResponse);
  EXPECT_EQ(s.result["action"], "accept");
}

TEST(JsonRpc, PreservesIdsExactly) {
  EXPECT_EQ(ClassifyOk(R"({"jsonrpc":"2.0","id":"abc","method":"m"})").id, "abc");
  EXPECT_EQ(ClassifyOk(R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"m"})").id.dump(),
            "18446744073709551615");
  EXPECT_EQ(ClassifyOk(R"({"jsonrpc":"2.0","id":-9223372036854775808,"method":"m"})").id.dump(),
            "-9223372036854775808");
  Json reply = MakeResult(Json::parse("18446744073709551615"), Json::object());
  EXPECT_EQ(reply.dump(), R"({"id":18446744073709551615,"jsonrpc":"2.0","result":{}})");
}

TEST(JsonRpc, RejectsMalformedEnvelopes) {
  EXPECT_EQ(ClassifyCode(R"([1,2])"), kInvalidRequest);
  EXPECT_EQ(ClassifyCode(R"("text")"), kInvalidRequest);
  EXPECT_EQ(ClassifyCode(R"({"id":1,"method":"m"})"), kInvalidRequest);
  EXPECT_EQ(ClassifyCode(R"({"jsonrpc":"1.0","id":1,"method":"m"})"), kInvalidRequest);
  EXPECT_EQ(ClassifyCode(R"({"jsonrpc":"2.0","id":1,"method":5})"), kInvalidRequest);
  EXPECT_EQ(ClassifyCode(R"({"jsonrpc":"2.0","id":1,"method":""})"), kInvalidRequest);
  EXPECT_EQ(ClassifyCode(R"({"jsonrpc":"2.0","id":1,"method":"m","params":[1]})"), kInvalidRequest);
  EXPECT_EQ(ClassifyCode(R"({"jsonrpc":"2.0","id":null,"method":"m"})"), kInvalidRequest);
  EXPECT_EQ(ClassifyCode(R"({"jsonrpc":"2.0","id":{"a":1},"method":"m"})"), kInvalidRequest);
  EXPECT_EQ(ClassifyCode(R"({"jsonrpc":"2.0","id":true,"method":"m"})"), kInvalidRequest);
  EXPECT_EQ(ClassifyCode(R"({"jsonrpc":"2.0","id":1.5,"method":"m"})"), kInvalidRequest);
  EXPECT_EQ(ClassifyCode(R"({"jsonrpc":"2.0","id":1e300,"method":"m"})"), kInvalidRequest);
  EXPECT_EQ(ClassifyCode(R"({"jsonrpc":"2.0","id":1,"result":{},"error":{}})"), kInvalidRequest);
  EXPECT_EQ(ClassifyCode(R"({"jsonrpc":"2.0","id":1})"), kInvalidRequest);
}

TEST(JsonRpc, ErrorCarriesTheIdWhenReadable) {
  Json id;
  EXPECT_EQ(ClassifyCode(R"({"jsonrpc":"1.0","id":42,"method":"m"})", &id), kInvalidRequest);
  EXPECT_EQ(id, 42);
}

TEST(JsonRpc, ErrorsWithoutAnIdOmitIt) {
  Json e = MakeError(nullptr, RpcError(kParseError, "bad"));
  EXPECT_FALSE(e.contains("id"));
  EXPECT_EQ(e["error"]["code"], kParseError);
  Json d = MakeError(3, RpcError(kInvalidParams, "x", Json{{"uri", "u"}}));
  EXPECT_EQ(d["error"]["data"]["uri"], "u");
}

}  // namespace
}  // namespace mt::mcp
