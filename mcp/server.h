// The dispatcher: one MCP server speaking both protocol eras over any transport. It never
// knows which transport carried a message; transports hand it decoded JSON plus a
// RequestEnv (session, channel, caller, HTTP version header) and send back what it returns.
//
// Era routing follows the version markers, not the method name: a request whose
// `_meta` names 2026-07-28 (or, on HTTP, whose MCP-Protocol-Version header does, or a
// `server/discover`) is modern and stateless — even `initialize` or `ping` sent that way is
// answered -32601; anything else belongs to the legacy session opened by `initialize`.
#pragma once
#include <atomic>
#include <chrono>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "mcp/channel.h"
#include "mcp/json_rpc.h"
#include "mcp/principal.h"
#include "mcp/protocol.h"
#include "mcp/registry.h"
#include "mcp/request_state.h"
#include "mcp/session.h"
#include "mcp/tasks.h"

namespace mt::mcp {

class RequestContext;
class TaskContext;
struct InputRequiredSignal;

struct ServerInfo {
  std::string name = "mt";
  std::string title;
  std::string version = "0.1.0";
  std::string instructions;
};

struct ServerOptions {
  size_t page_size = 100;                          // tools/list etc.
  int64_t list_ttl_ms = 60'000;                     // ttlMs on modern list results
  std::string request_state_key;                   // empty = random per process
  std::chrono::seconds request_state_ttl{15 * 60};
  // The Tasks extension (2026-07-28): limits, expiry, poll hint (mcp/tasks.h).
  TaskOptions tasks;
  // Called when a request is refused before any handler runs: an unknown tool, or a
  // requestState that does not open (tampered, replayed, expired, or bound to another
  // call or caller). The product writes these to its audit log; the refusal itself is the
  // JSON-RPC error the client gets either way.
  std::function<void(const Principal& who, const std::string& method, const std::string& name,
                     const std::string& reason)>
      on_refusal;
};

// Everything the transport knows about one inbound message.
struct RequestEnv {
  LegacySession* session = nullptr;     // legacy session (stdio: the process's; HTTP: by header)
  InFlight* in_flight = nullptr;        // where notifications/cancelled look requests up
  Channel* channel = nullptr;           // messages before the response; null = none
  Principal principal;
  std::optional<std::string> header_version;   // HTTP MCP-Protocol-Version, when present
  CancelFlag cancel;                    // raised by the transport (stdio cancel, HTTP close)

  // Filled in by Server::Admit.
  Era era = Era::kLegacy;
  std::string version;
  Json client_capabilities = Json::object();
  std::optional<LogLevel> log_level;    // modern: from _meta; legacy: the session's
};

class Server {
 public:
  Server(ServerInfo info, std::shared_ptr<Registry> registry, ServerOptions options = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Decodes, admits and dispatches one message. Returns the response to send (none for
  // notifications, responses and an ended subscriptions/listen).
  std::optional<Json> Handle(Json raw, RequestEnv& env);

  // The same in steps, for transports that must pick a status code or a stream mode first.
  // Decode throws RpcError (with `*id` set when readable); Admit throws RpcError.
  Message Decode(Json raw, Json* id) const { return Classify(std::move(raw), id); }
  void Admit(const Message& m, RequestEnv& env) const;
  std::optional<Json> Dispatch(const Message& m, RequestEnv& env);
  // A notification or a response from the client (never answered).
  void Accept(const Message& m, RequestEnv& env);

  // The era a request belongs to, from its markers: modern when `_meta` carries any
  // "io.modelcontextprotocol/" key, when an HTTP MCP-Protocol-Version header names a
  // non-legacy version, or for the modern-only methods (server/discover,
  // subscriptions/listen); legacy otherwise.
  static bool IsModernRequest(const Message& m, const std::optional<std::string>& header_version);

  // True when handling `method` may send messages before its response or wait on the
  // client.
  static bool MayStream(const std::string& method);
  // Whether this admitted request should be answered as a stream (HTTP: SSE). Legacy
  // calls may log, report progress or ask the client, so they stream; a modern call can
  // only carry progress (with a progressToken) or logs (with a logLevel) — otherwise it is
  // answered as plain JSON, which also lets errors carry their HTTP status.
  static bool WantsStream(const Message& m, const RequestEnv& env);
  // True when `tools/call` of `tool` can run inline on an I/O thread (see Tool::quick).
  bool IsQuick(const Message& m) const;

  // Legacy sessions receive unsolicited notifications (list_changed, resources/updated).
  void Attach(const std::shared_ptr<LegacySession>& session);
  void Detach(const LegacySession* session);
  // Tells subscribers that a resource changed.
  void ResourceUpdated(const std::string& uri);

  Registry& registry() { return *registry_; }
  TaskStore& tasks() { return *tasks_; }
  const ServerInfo& info() const { return info_; }
  Json Capabilities() const;

 private:
  struct Listen;
  // Who receives an unsolicited notification: legacy sessions and modern listen streams.
  struct Audience {
    std::vector<std::shared_ptr<LegacySession>> sessions;
    std::vector<std::shared_ptr<Listen>> listens;
  };
  Audience Snapshot();
  void Broadcast(const Audience& to, const std::string& method, Json params,
                 const std::function<bool(const LegacySession&)>& session_wants,
                 const std::function<bool(const Listen&)>& listen_wants);
  // Answers and handler state carried into a modern retry.
  struct Round {
    Json answers = Json::object();
    Json state;
  };
  Round OpenRound(const Json& params, const RequestEnv& env, const std::function<StateBinding()>& binding);
  Json InputRequired(const InputRequiredSignal& need, const RequestContext& ctx,
                     const StateBinding& binding);
  Json Run(const Message& m, RequestEnv& env);
  Json RunLegacyOnly(const Message& m, RequestEnv& env);
  Json Initialize(const Message& m, RequestEnv& env);
  Json Discover(RequestEnv& env);
  Json ListTools(const Json& params, RequestEnv& env);
  Json CallTool(const Message& m, RequestEnv& env);
  Json CallToolAsTask(const std::shared_ptr<const Tool>& tool, const Json& args, RequestEnv& env, Round round,
                      const Json& progress_token, const std::function<StateBinding()>& binding);
  // Runs a task's handler on its own thread and settles the task (or, for an on-demand call
  // that has not become a task yet, the waiting request's TaskLaunch).
  void RunTaskHandler(const std::shared_ptr<const Tool>& tool, const Json& args, const std::shared_ptr<TaskContext>& ctx);
  Json TaskMethod(const Message& m, RequestEnv& env);
  // A handler's ToolResult as the CallToolResult JSON, its structuredContent checked against
  // the tool's outputSchema.
  static Json FinishToolResult(const Tool& tool, ToolResult r);
  Json ListResources(const Json& params, RequestEnv& env);
  Json ListResourceTemplates(const Json& params, RequestEnv& env);
  Json ReadResource(const Message& m, RequestEnv& env);
  Json ListPrompts(const Json& params, RequestEnv& env);
  Json GetPrompt(const Message& m, RequestEnv& env);
  Json Complete(const Json& params);
  static Json ToolResultJson(ToolResult r);
  std::optional<Json> ListenForChanges(const Message& m, RequestEnv& env);
  Json Decorate(Json result, const std::string& method, const RequestEnv& env) const;
  void OnRegistryChange(ListKind kind);

  const ServerInfo info_;
  std::shared_ptr<Registry> registry_;
  const ServerOptions options_;
  RequestStateSealer sealer_;
  std::unique_ptr<TaskStore> tasks_;
  TaskThreads task_threads_;
  int listener_id_ = 0;
  int update_listener_id_ = 0;

  std::mutex sessions_mu_;
  std::list<std::weak_ptr<LegacySession>> sessions_;
  std::list<std::shared_ptr<Listen>> listens_;
};

}  // namespace mt::mcp
