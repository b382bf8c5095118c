// libFuzzer target: one untrusted JSON-RPC message through the whole server path that both
// transports share — the limited parse (depth, duplicate keys), the envelope checks, era
// routing, schema validation of arguments and results, and the handlers of a catalogue with
// varied schemas — once in a legacy session and once as a stateless 2026-07-28 request.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "mcp/call_context.h"
#include "mcp/json_parse.h"
#include "mcp/server.h"
#include "mcp/session.h"

namespace {

using namespace mt;
using namespace mt::mcp;

std::shared_ptr<Registry> MakeRegistry() {
  auto r = std::make_shared<Registry>();
  Tool echo;
  echo.name = "echo";
  echo.description = "echoes";
  echo.input_schema = Json::parse(R"({"type":"object","additionalProperties":false,"required":["text"],
    "properties":{"text":{"type":"string","maxLength":64},"n":{"type":"integer","minimum":0,"maximum":9},
    "mode":{"enum":["a","b"]},"tags":{"type":"array","maxItems":4,"items":{"type":"string"}},
    "when":{"type":["string","number"]},"opt":{"type":"object","properties":{"x":{"type":"boolean"}}}}})");
  echo.output_schema = Json::parse(R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})");
  echo.handler = [](const Json& a, CallContext&) { return ToolResult::Structured({{"text", a["text"]}}, a["text"]); };
  r->AddTool(echo);
  Tool ask;
  ask.name = "ask";
  ask.description = "asks the client";
  ask.handler = [](const Json&, CallContext& ctx) {
    Json a = ctx.AskClient({"ok", "elicitation/create",
                            {{"message", "ok?"}, {"requestedSchema", {{"type", "object"}, {"properties", Json::object()}}}}},
                           std::chrono::milliseconds(1));
    return ToolResult::Text("answer=" + a.value("action", ""));
  };
  r->AddTool(ask);
  Prompt p;
  p.name = "greet";
  p.description = "a prompt";
  p.arguments = {{"who", "who", true}};
  p.handler = [](const std::map<std::string, std::string>& args, CallContext&) {
    auto it = args.find("who");
    return PromptResult{"greeting", Json::array({{{"role", "user"},
                                                  {"content", {{"type", "text"}, {"text", "hello " + (it == args.end() ? std::string() : it->second)}}}}})};
  };
  r->AddPrompt(p);
  return r;
}

struct World {
  std::shared_ptr<Registry> registry = MakeRegistry();
  Server server{ServerInfo{}, registry};
  std::shared_ptr<LegacySession> session = std::make_shared<LegacySession>("fuzz");
  World() {
    server.Attach(session);
    RequestEnv env = Env();
    server.Handle(Json::parse(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",
      "capabilities":{"elicitation":{}},"clientInfo":{"name":"fuzz","version":"1"}}})"), env);
  }
  RequestEnv Env() {
    RequestEnv env;
    env.session = session.get();
    env.in_flight = &session->in_flight();
    env.principal = Principal{"fuzz", "agent", false};
    return env;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World* w = new World();
  JsonParseResult parsed = ParseUntrustedJson(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!parsed.ok()) return 0;
  Json copy = parsed.value;   // copies, dumps and comparisons must be safe at any accepted depth
  (void)copy.dump();
  RequestEnv legacy = w->Env();
  try {
    w->server.Handle(parsed.value, legacy);
  } catch (const RpcError&) {
  }
  RequestEnv modern;
  modern.principal = Principal{"fuzz", "agent", false};
  modern.header_version = "2026-07-28";
  try {
    w->server.Handle(std::move(parsed.value), modern);
  } catch (const RpcError&) {
  }
  return 0;
}
