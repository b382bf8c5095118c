#include "mcp/server.h"

#include <gtest/gtest.h>

#include <thread>

#include "mcp/call_context.h"

namespace mt::mcp {
namespace {

// Records what the dispatcher sends before a response.
class CaptureChannel : public Channel {
 public:
  bool CanSend() const override { return true; }
  bool Send(const Json& m) override {
    std::lock_guard lock(mu);
    sent.push_back(m);
    return true;
  }
  std::vector<Json> Sent() {
    std::lock_guard lock(mu);
    return sent;
  }
  std::mutex mu;
  std::vector<Json> sent;
};

Json ModernMeta(Json caps = Json::object()) {
  return {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"}, {"io.modelcontextprotocol/clientCapabilities", caps}};
}

class ServerTest : public ::testing::Test {
 protected:
  ServerTest() : registry(std::make_shared<Registry>()) {
    Tool echo;
    echo.name = "echo";
    echo.description = "echoes";
    echo.input_schema = Json::parse(R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false})");
    echo.output_schema = Json::parse(R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})");
    echo.handler = [](const Json& a, CallContext&) { return ToolResult::Structured({{"text", a["text"]}}, a["text"]); };
    registry->AddTool(echo);

    Tool liar = echo;
    liar.name = "liar";
    liar.handler = [](const Json&, CallContext&) { return ToolResult::Structured({{"text", 5}}, "5"); };
    registry->AddTool(liar);

    Tool ask;
    ask.name = "approve";
    ask.description = "asks the user";
    ask.handler = [](const Json&, CallContext& ctx) {
      Json a = ctx.AskClient({"ok", "elicitation/create",
                              {{"message", "Approve?"}, {"requestedSchema", {{"type", "object"}, {"properties", Json::object()}}}}});
      return ToolResult::Text("answer=" + a.value("action", ""));
    };
    registry->AddTool(ask);

    Tool slow;
    slow.name = "progress";
    slow.description = "reports progress and logs";
    slow.handler = [](const Json&, CallContext& ctx) {
      ctx.ReportProgress(1, 2);
      ctx.Log(LogLevel::kDebug, "debug line");
      ctx.Log(LogLevel::kWarning, "warning line");
      ctx.ReportProgress(2, 2);
      return ToolResult::Text("done");
    };
    registry->AddTool(slow);
    ServerOptions opts;
    opts.page_size = 2;
    server = std::make_unique<Server>(ServerInfo{}, registry, opts);
  }

  Json Call(const Json& msg, RequestEnv& env) {
    auto r = server->Handle(msg, env);
    return r ? *r : Json();
  }
  Json Legacy(const std::string& method, Json params = Json::object()) {
    return Call({{"jsonrpc", "2.0"}, {"id", ++id}, {"method", method}, {"params", params}}, legacy_env);
  }
  Json Modern(const std::string& method, Json params = Json::object(), Json caps = Json::object()) {
    params["_meta"] = ModernMeta(caps);
    RequestEnv env;
    env.channel = &channel;
    return Call({{"jsonrpc", "2.0"}, {"id", ++id}, {"method", method}, {"params", params}}, env);
  }
  void Initialize(Json caps = Json::object()) {
    legacy_env.session = &session;
    legacy_env.in_flight = &session.in_flight();
    legacy_env.channel = &channel;
    Json r = Legacy("initialize", {{"protocolVersion", "2025-06-18"}, {"capabilities", caps}, {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
    ASSERT_EQ(r["result"]["protocolVersion"], "2025-06-18");
  }

  std::shared_ptr<Registry> registry;
  std::unique_ptr<Server> server;
  LegacySession session{"s1"};
  CaptureChannel channel;
  RequestEnv legacy_env;
  int id = 0;
};

TEST_F(ServerTest, LegacyHandshakeNegotiatesVersion) {
  legacy_env.session = &session;
  Json r = Legacy("initialize", {{"protocolVersion", "1999-01-01"}, {"capabilities", Json::object()}});
  EXPECT_EQ(r["result"]["protocolVersion"], "2025-11-25");   // ours, for the client to judge
  EXPECT_EQ(r["result"]["serverInfo"]["name"], "mt");
  EXPECT_FALSE(r["result"].contains("resultType"));
}

TEST_F(ServerTest, LegacyRequestsNeedASession) {
  legacy_env.session = &session;
  EXPECT_EQ(Legacy("tools/list")["error"]["code"], kInvalidRequest);
  EXPECT_EQ(Legacy("ping")["result"], Json::object());   // ping is allowed before initialize
}

TEST_F(ServerTest, EmptyLegacyResultsStayEmpty) {
  Initialize();
  EXPECT_EQ(Legacy("ping")["result"].dump(), "{}");
  EXPECT_EQ(Legacy("logging/setLevel", {{"level", "info"}})["result"].dump(), "{}");
  EXPECT_EQ(Legacy("logging/setLevel", {{"level", "loud"}})["error"]["code"], kInvalidParams);
}

TEST_F(ServerTest, PaginatesWithOpaqueCursors) {
  Initialize();
  Json p1 = Legacy("tools/list");
  ASSERT_EQ(p1["result"]["tools"].size(), 2u);
  std::string cursor = p1["result"]["nextCursor"];
  Json p2 = Legacy("tools/list", {{"cursor", cursor}});
  EXPECT_EQ(p2["result"]["tools"].size(), 2u);
  EXPECT_FALSE(p2["result"].contains("nextCursor"));
  EXPECT_EQ(Legacy("tools/list", {{"cursor", "bogus!"}})["error"]["code"], kInvalidParams);
  EXPECT_EQ(Legacy("tools/list", {{"cursor", 3}})["error"]["code"], kInvalidParams);
}

TEST_F(ServerTest, ValidatesArgumentsBeforeTheHandler) {
  Initialize();
  Json r = Legacy("tools/call", {{"name", "echo"}, {"arguments", {{"text", 3}}}});
  EXPECT_TRUE(r["result"]["isError"]);
  EXPECT_EQ(r["result"]["content"][0]["text"], "Invalid arguments: arguments.text: expected string, got integer");
  r = Legacy("tools/call", {{"name", "echo"}});
  EXPECT_NE(r["result"]["content"][0]["text"].get<std::string>().find("arguments.text: required"), std::string::npos);
  r = Legacy("tools/call", {{"name", "echo"}, {"arguments", {{"text", "hi"}}}});
  EXPECT_EQ(r["result"]["structuredContent"]["text"], "hi");
  EXPECT_FALSE(r["result"].contains("isError"));
}

TEST_F(ServerTest, OutputViolatingItsSchemaBecomesAnError) {
  Initialize();
  Json r = Legacy("tools/call", {{"name", "liar"}, {"arguments", {{"text", "x"}}}});
  EXPECT_TRUE(r["result"]["isError"]);
  EXPECT_NE(r["result"]["content"][0]["text"].get<std::string>().find("violates its outputSchema"), std::string::npos);
}

TEST_F(ServerTest, UnknownToolAndMethodAreProtocolErrors) {
  Initialize();
  Json r = Legacy("tools/call", {{"name", "nope"}});
  EXPECT_EQ(r["error"]["code"], kInvalidParams);
  EXPECT_EQ(Legacy("no/such")["error"]["code"], kMethodNotFound);
  EXPECT_EQ(Legacy("server/discover")["error"]["code"], kInvalidParams);   // modern-only: needs _meta
}

TEST_F(ServerTest, NotificationsAreNeverAnswered) {
  Initialize();
  EXPECT_FALSE(server->Handle({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, legacy_env).has_value());
  EXPECT_FALSE(server->Handle({{"jsonrpc", "2.0"}, {"method", "tools/list"}}, legacy_env).has_value());
  EXPECT_FALSE(server->Handle({{"jsonrpc", "2.0"}, {"id", "x"}, {"result", {}}}, legacy_env).has_value());
}

TEST_F(ServerTest, ProgressAndLogsFollowTheRequest) {
  Initialize();
  Legacy("logging/setLevel", {{"level", "info"}});
  channel.sent.clear();
  Legacy("tools/call", {{"name", "progress"}, {"_meta", {{"progressToken", "tok"}}}});
  auto sent = channel.Sent();
  ASSERT_EQ(sent.size(), 3u);   // 2 progress + the warning (debug filtered out)
  EXPECT_EQ(sent[0]["params"]["progressToken"], "tok");
  EXPECT_EQ(sent[1]["params"]["level"], "warning");
  EXPECT_EQ(sent[2]["params"]["progress"], 2);
  // Modern: no logs unless the request asks; progress only with a token.
  channel.sent.clear();
  Modern("tools/call", {{"name", "progress"}});
  EXPECT_TRUE(channel.Sent().empty());
}

TEST_F(ServerTest, LegacyElicitationIsARealServerRequest) {
  Initialize({{"elicitation", Json::object()}});
  std::thread answer([&] {
    for (int i = 0; i < 200; ++i) {
      auto sent = channel.Sent();
      if (!sent.empty() && sent.back().value("method", "") == "elicitation/create") {
        session.Deliver(sent.back()["id"], {{"action", "accept"}}, nullptr);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  Json r = Legacy("tools/call", {{"name", "approve"}});
  answer.join();
  EXPECT_EQ(r["result"]["content"][0]["text"], "answer=accept");
}

TEST_F(ServerTest, LegacyElicitationNeedsTheCapability) {
  Initialize();
  Json r = Legacy("tools/call", {{"name", "approve"}});
  EXPECT_EQ(r["error"]["code"], kMissingRequiredClientCapability);
}

TEST_F(ServerTest, ModernEnvelopeIsValidatedInOrder) {
  RequestEnv env;
  Json r = Call({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "server/discover"}, {"params", Json::object()}}, env);
  EXPECT_EQ(r["error"]["code"], kInvalidParams);
  EXPECT_EQ(r["id"], 1);
  Json meta = {{"io.modelcontextprotocol/protocolVersion", "v999"}, {"io.modelcontextprotocol/clientCapabilities", Json::object()}};
  r = Call({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "server/discover"}, {"params", {{"_meta", meta}}}}, env);
  EXPECT_EQ(r["error"]["code"], kUnsupportedProtocolVersion);
  EXPECT_EQ(r["error"]["data"]["requested"], "v999");
  EXPECT_EQ(r["error"]["data"]["supported"][0], "2026-07-28");
  env.header_version = "2026-07-28";
  r = Call({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "server/discover"}, {"params", {{"_meta", meta}}}}, env);
  EXPECT_EQ(r["error"]["code"], kHeaderMismatch);
}

TEST_F(ServerTest, ModernResultsAreDecorated) {
  Json d = Modern("server/discover");
  EXPECT_EQ(d["result"]["resultType"], "complete");
  EXPECT_EQ(d["result"]["supportedVersions"][0], "2026-07-28");
  EXPECT_TRUE(d["result"]["_meta"]["io.modelcontextprotocol/serverInfo"].contains("version"));
  Json l = Modern("tools/list");
  EXPECT_TRUE(l["result"]["ttlMs"].is_number_integer());
  EXPECT_EQ(l["result"]["cacheScope"], "public");
  Json e = Modern("tools/call", {{"name", "echo"}, {"arguments", {{"text", 1}}}});
  EXPECT_EQ(e["result"]["resultType"], "complete");
  EXPECT_TRUE(e["result"]["isError"]);
}

TEST_F(ServerTest, ModernTaggedLegacyMethodsDoNotExist) {
  for (const char* m : {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"})
    EXPECT_EQ(Modern(m)["error"]["code"], kMethodNotFound) << m;
}

TEST(ServerRefusals, ReachTheHookBeforeAnyHandlerRuns) {
  auto registry = std::make_shared<Registry>();
  int ran = 0;
  Tool ask;
  ask.name = "ask";
  ask.description = "asks the user";
  ask.handler = [&ran](const Json&, CallContext& ctx) {
    ++ran;
    Json a = ctx.AskClient({"ok", "elicitation/create", {{"message", "?"}, {"requestedSchema", {{"type", "object"}}}}});
    return ToolResult::Text("answer=" + a.value("action", ""));
  };
  registry->AddTool(ask);
  std::vector<std::string> refusals;
  ServerOptions opts;
  opts.on_refusal = [&refusals](const Principal& who, const std::string& method, const std::string& name, const std::string& reason) {
    refusals.push_back(who.name + "|" + method + "|" + name + "|" + reason);
  };
  Server server(ServerInfo{}, registry, opts);
  RequestEnv env;
  env.principal = Principal{"bob", "agent", true};
  int id = 0;
  auto call = [&](Json params) {
    params["_meta"] = ModernMeta({{"elicitation", Json::object()}});
    auto r = server.Handle({{"jsonrpc", "2.0"}, {"id", ++id}, {"method", "tools/call"}, {"params", params}}, env);
    return r ? *r : Json();
  };
  std::string state = call({{"name", "ask"}})["result"]["requestState"];
  EXPECT_EQ(ran, 1);
  EXPECT_TRUE(refusals.empty());
  EXPECT_EQ(call({{"name", "ask"}, {"requestState", state + "x"}})["error"]["code"], kInvalidParams);
  EXPECT_EQ(call({{"name", "approve"}})["error"]["code"], kInvalidParams);
  EXPECT_EQ(call({{"name", "ask"}, {"requestState", state}, {"inputResponses", {{"ok", {{"action", "accept"}}}}}})["result"]["content"][0]["text"],
            "answer=accept");
  EXPECT_EQ(call({{"name", "ask"}, {"requestState", state}, {"inputResponses", {{"ok", {{"action", "accept"}}}}}})["error"]["code"],
            kInvalidParams);   // replayed
  EXPECT_EQ(ran, 2);
  ASSERT_EQ(refusals.size(), 3u);
  EXPECT_EQ(refusals[0].rfind("bob|tools/call|ask|requestState refused: ", 0), 0u) << refusals[0];
  EXPECT_EQ(refusals[1], "bob|tools/call|approve|unknown tool: approve");
  EXPECT_EQ(refusals[2].rfind("bob|tools/call|ask|requestState refused: ", 0), 0u) << refusals[2];
}

TEST_F(ServerTest, MultiRoundTripWithSignedState) {
  Json caps = {{"elicitation", Json::object()}};
  Json r1 = Modern("tools/call", {{"name", "approve"}}, caps);
  ASSERT_EQ(r1["result"]["resultType"], "input_required");
  EXPECT_EQ(r1["result"]["inputRequests"]["ok"]["method"], "elicitation/create");
  std::string state = r1["result"]["requestState"];
  Json r2 = Modern("tools/call", {{"name", "approve"}, {"requestState", state}, {"inputResponses", {{"ok", {{"action", "decline"}}}}}}, caps);
  EXPECT_EQ(r2["result"]["content"][0]["text"], "answer=decline");
  // The same state cannot be redeemed twice, nor altered.
  Json r3 = Modern("tools/call", {{"name", "approve"}, {"requestState", state}, {"inputResponses", {{"ok", {{"action", "accept"}}}}}}, caps);
  EXPECT_EQ(r3["error"]["code"], kInvalidParams);
  Json r4 = Modern("tools/call", {{"name", "approve"}, {"requestState", state + "x"}}, caps);
  EXPECT_EQ(r4["error"]["code"], kInvalidParams);
  // Answers of the wrong shape are refused rather than trusted.
  Json r5 = Modern("tools/call", {{"name", "approve"}, {"inputResponses", {{"ok", 12345}}}}, caps);
  EXPECT_EQ(r5["error"]["code"], kInvalidParams);
  Json r6 = Modern("tools/call", {{"name", "approve"}, {"inputResponses", nullptr}}, caps);
  EXPECT_EQ(r6["error"]["code"], kInvalidParams);
  // Without the capability the client is not asked at all.
  EXPECT_EQ(Modern("tools/call", {{"name", "approve"}})["error"]["code"], kMissingRequiredClientCapability);
}

TEST_F(ServerTest, ResourceNotFoundCodeDependsOnEra) {
  Initialize();
  Json legacy = Legacy("resources/read", {{"uri", "x://none"}});
  EXPECT_EQ(legacy["error"]["code"], kResourceNotFoundLegacy);
  Json modern = Modern("resources/read", {{"uri", "x://none"}});
  EXPECT_EQ(modern["error"]["code"], kInvalidParams);
  EXPECT_EQ(modern["error"]["data"]["uri"], "x://none");
}

TEST_F(ServerTest, PromptsCheckRequiredArguments) {
  Prompt p;
  p.name = "triage";
  p.description = "d";
  p.arguments = {{"job", "job id", true}};
  p.handler = [](const std::map<std::string, std::string>& a, CallContext&) {
    PromptResult r;
    r.messages.push_back({{"role", "user"}, {"content", {{"type", "text"}, {"text", "triage " + a.at("job")}}}});
    return r;
  };
  p.complete = [](const std::string&, const std::string& prefix, const auto&) {
    return std::vector<std::string>{prefix + "77"};
  };
  registry->AddPrompt(p);
  Initialize();
  EXPECT_EQ(Legacy("prompts/get", {{"name", "triage"}})["error"]["code"], kInvalidParams);
  EXPECT_EQ(Legacy("prompts/get", {{"name", "triage"}, {"arguments", {{"job", "7877"}}}})["result"]["messages"][0]["content"]["text"],
            "triage 7877");
  Json c = Legacy("completion/complete", {{"ref", {{"type", "ref/prompt"}, {"name", "triage"}}}, {"argument", {{"name", "job"}, {"value", "78"}}}});
  EXPECT_EQ(c["result"]["completion"]["values"][0], "7877");
}

TEST_F(ServerTest, ListChangesReachSessions) {
  std::vector<Json> notes;
  auto s = std::make_shared<LegacySession>("n");
  s->SetNotifier([&](const Json& m) {
    notes.push_back(m);
    return true;
  });
  server->Attach(s);
  s->Initialize("2025-11-25", Json::object(), nullptr);
  Tool t;
  t.name = "new_tool";
  t.description = "d";
  t.handler = [](const Json&, CallContext&) { return ToolResult::Text(""); };
  registry->AddTool(t);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0]["method"], "notifications/tools/list_changed");
  server->Detach(s.get());
}

}  // namespace
}  // namespace mt::mcp
