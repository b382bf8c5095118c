#include "mcp/http_transport.h"

#include <gtest/gtest.h>

#include "mcp/call_context.h"
#include <httplib.h>

#include <atomic>
#include <thread>

namespace mt::mcp {
namespace {

class HttpTest : public ::testing::Test {
 protected:
  void Start(HttpOptions opts = {}) {
    registry = std::make_shared<Registry>();
    Tool t;
    t.name = "hello";
    t.description = "d";
    t.handler = [](const Json&, CallContext& ctx) { return ToolResult::Text("hello " + ctx.caller().role); };
    registry->AddTool(t);
    Tool wait;
    wait.name = "wait_for_cancel";
    wait.description = "runs until cancelled";
    wait.handler = [this](const Json&, CallContext& ctx) {
      for (int i = 0; i < 1000 && !ctx.cancelled(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      saw_cancel = ctx.cancelled();
      return ToolResult::Text("stopped");
    };
    registry->AddTool(wait);
    server = std::make_unique<Server>(ServerInfo{}, registry);
    opts.port = 0;
    http = std::make_unique<HttpTransport>(*server, opts);
    std::string err;
    ASSERT_TRUE(http->Bind(&err)) << err;
    thread = std::thread([this] { http->Serve(); });
    client = std::make_unique<httplib::Client>("127.0.0.1", http->port());
  }
  void TearDown() override {
    if (http) http->Stop();
    if (thread.joinable()) thread.join();
  }
  httplib::Headers H(std::initializer_list<std::pair<std::string, std::string>> extra = {}) {
    httplib::Headers h = {{"Accept", "application/json, text/event-stream"}};
    for (auto& [k, v] : extra) h.emplace(k, v);
    return h;
  }
  std::string Init(httplib::Headers extra = {}) {
    auto h = H();
    h.insert(extra.begin(), extra.end());
    auto r = client->Post("/mcp", h, R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}})",
                          "application/json");
    EXPECT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    return r->get_header_value("Mcp-Session-Id");
  }

  std::shared_ptr<Registry> registry;
  std::unique_ptr<Server> server;
  std::unique_ptr<HttpTransport> http;
  std::unique_ptr<httplib::Client> client;
  std::thread thread;
  std::atomic<bool> saw_cancel{false};
};

const char* kModernList =
    R"({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})";

TEST_F(HttpTest, LegacySessionLifecycle) {
  Start();
  std::string sid = Init();
  ASSERT_EQ(sid.size(), 32u);
  auto r = client->Post("/mcp", H({{"Mcp-Session-Id", sid}}), R"({"jsonrpc":"2.0","method":"notifications/initialized"})", "application/json");
  EXPECT_EQ(r->status, 202);
  r = client->Post("/mcp", H(), R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})", "application/json");
  EXPECT_EQ(r->status, 400);
  r = client->Post("/mcp", H({{"Mcp-Session-Id", "nope"}}), R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})", "application/json");
  EXPECT_EQ(r->status, 404);
  r = client->Post("/mcp", H({{"Mcp-Session-Id", sid}}), R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})", "application/json");
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(Json::parse(r->body)["result"]["tools"][0]["name"], "hello");
  r = client->Delete("/mcp", H({{"Mcp-Session-Id", sid}}));
  EXPECT_EQ(r->status, 200);
  r = client->Post("/mcp", H({{"Mcp-Session-Id", sid}}), R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})", "application/json");
  EXPECT_EQ(r->status, 404);
}

TEST_F(HttpTest, ModernIsStatelessAndHeaderChecked) {
  Start();
  auto ok = client->Post("/mcp", H({{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "tools/list"}}), kModernList, "application/json");
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(Json::parse(ok->body)["result"]["resultType"], "complete");
  auto mismatch = client->Post("/mcp", H({{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "prompts/list"}}), kModernList, "application/json");
  EXPECT_EQ(mismatch->status, 400);
  EXPECT_EQ(Json::parse(mismatch->body)["error"]["code"], kHeaderMismatch);
  auto no_version = client->Post("/mcp", H({{"Mcp-Method", "tools/list"}}), kModernList, "application/json");
  EXPECT_EQ(no_version->status, 400);
  auto get = client->Get("/mcp", H({{"MCP-Protocol-Version", "2026-07-28"}}));
  EXPECT_EQ(get->status, 405);
}

TEST_F(HttpTest, RejectsForeignHostAndOrigin) {
  Start();
  auto r = client->Post("/mcp", H({{"Origin", "http://evil.example.com"}}), kModernList, "application/json");
  EXPECT_EQ(r->status, 403);
  httplib::Headers h = H({{"Host", "evil.example.com"}});
  r = client->Post("/mcp", h, kModernList, "application/json");
  EXPECT_EQ(r->status, 403);
  r = client->Get("/healthz", H({{"Origin", "http://localhost:3000"}}));
  EXPECT_EQ(r->status, 200);
}

TEST_F(HttpTest, BearerTokensAndRoles) {
  HttpOptions opts;
  opts.authenticate = [](const std::string& t) -> std::optional<Principal> {
    if (t == "s3cret") return Principal{"ci-bot", "ci", true};
    return std::nullopt;
  };
  Start(opts);
  auto r = client->Post("/mcp", H(), kModernList, "application/json");
  EXPECT_EQ(r->status, 401);
  EXPECT_NE(r->get_header_value("WWW-Authenticate").find("Bearer"), std::string::npos);
  r = client->Post("/mcp", H({{"Authorization", "Bearer wrong"}}), kModernList, "application/json");
  EXPECT_EQ(r->status, 401);
  std::string sid = Init({{"Authorization", "Bearer s3cret"}});
  r = client->Post("/mcp", H({{"Authorization", "Bearer s3cret"}, {"Mcp-Session-Id", sid}}),
                   R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"hello"}})", "application/json");
  ASSERT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("hello ci"), std::string::npos);
}

TEST_F(HttpTest, ClosingTheStreamCancelsTheRequest) {
  Start();
  std::string sid = Init();
  // A client that gives up after 300 ms closes the SSE response: that is the cancel.
  httplib::Client impatient("127.0.0.1", http->port());
  impatient.set_read_timeout(0, 300000);
  auto r = impatient.Post("/mcp", H({{"Mcp-Session-Id", sid}}),
                          R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"wait_for_cancel"}})",
                          "application/json");
  EXPECT_FALSE(r);   // timed out
  for (int i = 0; i < 300 && !saw_cancel; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(saw_cancel);
}

TEST_F(HttpTest, LegacyGetStreamCarriesListChanges) {
  Start();
  std::string sid = Init();
  std::string received;
  std::thread change([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    Tool t;
    t.name = "late_tool";
    t.description = "d";
    t.handler = [](const Json&, CallContext&) { return ToolResult::Text(""); };
    registry->AddTool(t);
  });
  httplib::Client listener("127.0.0.1", http->port());
  listener.set_read_timeout(5, 0);
  auto r = listener.Get("/mcp", H({{"Mcp-Session-Id", sid}}), [&](const char* data, size_t n) {
    received.append(data, n);
    return received.find("list_changed") == std::string::npos;   // stop once it arrived
  });
  change.join();
  EXPECT_NE(received.find("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}"),
            std::string::npos)
      << received;
  // An unknown session has no stream.
  auto second = client->Get("/mcp", H({{"Mcp-Session-Id", "unknown"}}));
  EXPECT_EQ(second->status, 404);
}

TEST_F(HttpTest, BodyLimitMediaTypeAndParseErrors) {
  HttpOptions opts;
  opts.max_body_bytes = 1024;
  Start(opts);
  auto r = client->Post("/mcp", H(), std::string(4096, ' '), "application/json");
  EXPECT_EQ(r->status, 413);
  r = client->Post("/mcp", H(), "{}", "text/plain");
  EXPECT_EQ(r->status, 415);
  r = client->Post("/mcp", H(), "{not json", "application/json");
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(Json::parse(r->body)["error"]["code"], kParseError);
  r = client->Get("/healthz");
  EXPECT_EQ(r->status, 200);   // still serving
}

// Posts one modern request; `caps` are its client capabilities, `extra` more headers.
httplib::Result PostModern(httplib::Client& c, const std::string& method, Json params, httplib::Headers extra = {},
                           Json caps = Json::object()) {
  params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                     {"io.modelcontextprotocol/clientCapabilities", caps}};
  httplib::Headers h = {{"Accept", "application/json, text/event-stream"},
                        {"MCP-Protocol-Version", "2026-07-28"},
                        {"Mcp-Method", method}};
  if (params.contains("name")) h.emplace("Mcp-Name", params["name"].get<std::string>());
  if (params.contains("taskId") && params["taskId"].is_string()) h.emplace("Mcp-Name", params["taskId"].get<std::string>());
  for (auto& [k, v] : extra) {
    h.erase(k);
    h.emplace(k, v);
  }
  Json body = {{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}};
  return c.Post("/mcp", h, body.dump(), "application/json");
}

TEST_F(HttpTest, TaskIdsOfOneTokenAreInvisibleToAnother) {
  HttpOptions opts;
  opts.authenticate = [](const std::string& t) -> std::optional<Principal> {
    if (t == "alice-secret") return Principal{"alice", "agent", true};
    if (t == "bob-secret") return Principal{"bob", "agent", true};
    return std::nullopt;
  };
  Start(opts);
  Tool job;
  job.name = "job";
  job.description = "runs until cancelled";
  job.task_support = TaskSupport::kOptional;
  job.handler = [this](const Json&, CallContext& ctx) {
    for (int i = 0; i < 1000 && !ctx.cancelled(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    saw_cancel = ctx.cancelled();
    return ToolResult::Text("stopped");
  };
  registry->AddTool(job);
  const Json caps = {{"extensions", {{"io.modelcontextprotocol/tasks", Json::object()}}}};
  httplib::Headers alice = {{"Authorization", "Bearer alice-secret"}}, bob = {{"Authorization", "Bearer bob-secret"}};

  auto r = PostModern(*client, "tools/call", {{"name", "job"}, {"arguments", Json::object()}}, alice, caps);
  ASSERT_EQ(r->status, 200) << r->body;
  std::string task = Json::parse(r->body)["result"]["taskId"];
  r = PostModern(*client, "tasks/get", {{"taskId", task}}, alice, caps);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Json::parse(r->body)["result"]["status"], "working");

  auto unknown = PostModern(*client, "tasks/get", {{"taskId", "0123456789abcdef0123456789abcdef"}}, bob, caps);
  EXPECT_EQ(unknown->status, 400);
  Json unknown_error = Json::parse(unknown->body)["error"];
  EXPECT_EQ(unknown_error["code"], kInvalidParams);
  for (const char* method : {"tasks/get", "tasks/cancel"}) {
    r = PostModern(*client, method, {{"taskId", task}}, bob, caps);
    EXPECT_EQ(r->status, 400) << method;
    EXPECT_EQ(Json::parse(r->body)["error"], unknown_error) << method;
  }
  // Routing header: Mcp-Name carries the taskId.
  r = PostModern(*client, "tasks/get", {{"taskId", task}}, {{"Authorization", "Bearer alice-secret"}, {"Mcp-Name", "other"}}, caps);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(Json::parse(r->body)["error"]["code"], kHeaderMismatch);
  // Without the extension: -32021.
  r = PostModern(*client, "tasks/get", {{"taskId", task}}, alice);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(Json::parse(r->body)["error"]["code"], kMissingRequiredClientCapability);

  EXPECT_FALSE(saw_cancel);
  r = PostModern(*client, "tasks/cancel", {{"taskId", task}}, alice, caps);
  ASSERT_EQ(r->status, 200) << r->body;
  for (int i = 0; i < 500 && !saw_cancel; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(saw_cancel);
}

TEST_F(HttpTest, McpParamHeadersMustMatchTheArguments) {
  Start();
  Tool where;
  where.name = "where";
  where.description = "echoes a region";
  where.input_schema = Json::parse(R"({"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}})");
  where.handler = [](const Json& a, CallContext&) { return ToolResult::Text(a.value("region", "")); };
  registry->AddTool(where);
  auto call = [&](Json args, httplib::Headers extra) {
    return PostModern(*client, "tools/call", {{"name", "where"}, {"arguments", std::move(args)}}, std::move(extra));
  };
  EXPECT_EQ(call({{"region", "us-west1"}}, {{"Mcp-Param-Region", "us-west1"}})->status, 200);
  EXPECT_EQ(call({{"region", "us-west1"}}, {{"mcp-param-region", "us-west1"}})->status, 200);   // names are case-insensitive
  EXPECT_EQ(call({{"region", "Hello"}}, {{"Mcp-Param-Region", "=?base64?SGVsbG8=?="}})->status, 200);
  EXPECT_EQ(call(Json::object(), {})->status, 200);
  for (auto [args, headers] : std::vector<std::pair<Json, httplib::Headers>>{
           {{{"region", "us-west1"}}, {}},
           {{{"region", "us-west1"}}, {{"Mcp-Param-Region", "eu-west1"}}},
           {{{"region", "Hello"}}, {{"Mcp-Param-Region", "=?base64?SGVsbG8?="}}}}) {
    auto r = call(args, headers);
    EXPECT_EQ(r->status, 400) << args.dump();
    EXPECT_EQ(Json::parse(r->body)["error"]["code"], kHeaderMismatch);
  }
}

}  // namespace
}  // namespace mt::mcp
