#include "mcp/request_state.h"

#include <gtest/gtest.h>

#include <thread>

#include "mcp/json_rpc.h"

namespace mt::mcp {
namespace {

StateBinding Binding() { return {"tools/call", "submit_job", RequestStateSealer::Digest({{"nodes", 4}}), "alice"}; }

std::string OpenError(RequestStateSealer& s, const std::string& sealed, const StateBinding& b) {
  try {
    s.Open(sealed, b);
  } catch (const RpcError& e) {
    EXPECT_EQ(e.code(), kInvalidParams);
    return e.what();
  }
  return "";
}

TEST(RequestState, RoundTripsOnce) {
  RequestStateSealer s;
  std::string sealed = s.Seal(Binding(), {{"round", 2}});
  EXPECT_EQ(s.Open(sealed, Binding())["round"], 2);
  EXPECT_NE(OpenError(s, sealed, Binding()).find("already used"), std::string::npos);
}

TEST(RequestState, RejectsTampering) {
  RequestStateSealer s;
  std::string sealed = s.Seal(Binding(), {{"approved", false}});
  EXPECT_NE(OpenError(s, sealed + "-TAMPERED", Binding()).find("signature"), std::string::npos);
  std::string flipped = sealed;
  flipped[5] = flipped[5] == 'A' ? 'B' : 'A';
  EXPECT_NE(OpenError(s, flipped, Binding()).find("signature"), std::string::npos);
  EXPECT_NE(OpenError(s, "no-dot-here", Binding()).find("not a state"), std::string::npos);
  RequestStateSealer other;
  EXPECT_NE(OpenError(other, sealed, Binding()).find("signature"), std::string::npos);
}

TEST(RequestState, IsBoundToCallerArgumentsAndTool) {
  RequestStateSealer s;
  auto b = Binding();
  auto other_caller = b;
  other_caller.principal = "mallory";
  EXPECT_NE(OpenError(s, s.Seal(b, {}), other_caller).find("different caller"), std::string::npos);
  auto other_args = b;
  other_args.args_digest = RequestStateSealer::Digest({{"nodes", 24}});
  EXPECT_NE(OpenError(s, s.Seal(b, {}), other_args).find("different arguments"), std::string::npos);
  auto other_tool = b;
  other_tool.name = "cancel_job";
  EXPECT_NE(OpenError(s, s.Seal(b, {}), other_tool).find("different request"), std::string::npos);
}

TEST(RequestState, Expires) {
  RequestStateSealer s("fixed-key", std::chrono::seconds(0));
  std::string sealed = s.Seal(Binding(), {});
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_NE(OpenError(s, sealed, Binding()).find("expired"), std::string::npos);
}

TEST(RequestState, DigestIgnoresKeyOrder) {
  EXPECT_EQ(RequestStateSealer::Digest(Json::parse(R"({"a":1,"b":2})")),
            RequestStateSealer::Digest(Json::parse(R"({"b":2,"a":1})")));
}

}  // namespace
}  // namespace mt::mcp
