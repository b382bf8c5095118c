#include "mcp/server.h"

#include <iostream>
#include <thread>

#include "mcp/base64.h"
#include "mcp/request_context.h"
#include "mcp/schema_validator.h"
#include "mcp/task_context.h"

namespace mt::mcp {

namespace {

// Methods that exist only in the legacy era; modern-tagged calls to them are -32601.
bool IsLegacyOnly(const std::string& m) {
  return m == "initialize" || m == "ping" || m == "logging/setLevel" || m == "resources/subscribe" ||
         m == "resources/unsubscribe";
}

bool IsModernOnly(const std::string& m) { return m == "server/discover" || m == "subscriptions/listen"; }

// Results that must carry ttlMs/cacheScope in the modern era.
bool IsCacheable(const std::string& m) {
  return m == "server/discover" || m == "tools/list" || m == "prompts/list" || m == "resources/list" ||
         m == "resources/templates/list" || m == "resources/read";
}

const Json& MetaOf(const Json& params) {
  static const Json empty = Json::object();
  auto it = params.find("_meta");
  return it != params.end() && it->is_object() ? *it : empty;
}

std::string RequireString(const Json& params, const char* key) {
  auto it = params.find(key);
  if (it == params.end() || !it->is_string())
    throw RpcError(kInvalidParams, std::string("params.") + key + " must be a string");
  return it->get<std::string>();
}

// Opaque pagination cursor: base64url("o:<offset>").
size_t DecodeCursor(const Json& params) {
  auto it = params.find("cursor");
  if (it == params.end() || it->is_null()) return 0;
  if (!it->is_string()) throw RpcError(kInvalidParams, "params.cursor must be a string");
  const auto& s = it->get_ref<const std::string&>();
  if (s.empty()) return 0;
  auto raw = Base64Decode(s);
  if (!raw || raw->rfind("o:", 0) != 0) throw RpcError(kInvalidParams, "params.cursor is not a cursor this server issued");
  try {
    size_t used = 0;
    size_t off = std::stoul(raw->substr(2), &used);
    if (used != raw->size() - 2) throw std::invalid_argument("trailing");
    return off;
  } catch (const std::exception&) {
    throw RpcError(kInvalidParams, "params.cursor is not a cursor this server issued");
  }
}

template <typename T, typename F>
Json Page(const std::vector<T>& items, const Json& params, size_t page_size, const char* key, F to_json) {
  size_t off = DecodeCursor(params);
  if (off > items.size()) throw RpcError(kInvalidParams, "params.cursor is past the end of the list");
  Json list = Json::array();
  size_t end = std::min(items.size(), off + page_size);
  for (size_t i = off; i < end; ++i) list.push_back(to_json(*items[i]));
  Json result = {{key, std::move(list)}};
  if (end < items.size()) result["nextCursor"] = Base64UrlEncode("o:" + std::to_string(end));
  return result;
}

std::map<std::string, std::string> StringArgs(const Json& params) {
  std::map<std::string, std::string> out;
  auto it = params.find("arguments");
  if (it == params.end() || it->is_null()) return out;
  if (!it->is_object()) throw RpcError(kInvalidParams, "params.arguments must be an object");
  for (auto a = it->begin(); a != it->end(); ++a) {
    if (a.value().is_string()) out[a.key()] = a.value().get<std::string>();
    else out[a.key()] = a.value().dump();
  }
  return out;
}

}  // namespace

struct Server::Listen {
  Json id;
  Channel* channel;
  bool tools = false, prompts = false, resources = false;
  std::set<std::string> uris;
  std::mutex mu;   // serialises sends on the channel
};

Server::Server(ServerInfo info, std::shared_ptr<Registry> registry, ServerOptions options)
    : info_(std::move(info)),
      registry_(std::move(registry)),
      options_(std::move(options)),
      sealer_(options_.request_state_key, options_.request_state_ttl),
      tasks_(std::make_unique<TaskStore>(options_.tasks)) {
  listener_id_ = registry_->AddListener([this](ListKind k) { OnRegistryChange(k); });
  update_listener_id_ = registry_->AddUpdateListener([this](const std::string& uri) { ResourceUpdated(uri); });
}

Server::~Server() {
  // Task handlers run on threads of their own: cancel them and wait until they returned.
  tasks_->CancelAll();
  task_threads_.JoinAll();
  registry_->RemoveListener(listener_id_);
  registry_->RemoveUpdateListener(update_listener_id_);
}

Json Server::Capabilities() const {
  return Json{{"tools", {{"listChanged", true}}},
              {"resources", {{"subscribe", true}, {"listChanged", true}}},
              {"prompts", {{"listChanged", true}}},
              {"completions", Json::object()},
              {"logging", Json::object()}};
}

bool Server::MayStream(const std::string& method) {
  return method == "tools/call" || method == "prompts/get" || method == "resources/read" ||
         method == "subscriptions/listen";
}

bool Server::WantsStream(const Message& m, const RequestEnv& env) {
  if (!MayStream(m.method)) return false;
  if (env.era == Era::kLegacy || m.method == "subscriptions/listen") return true;
  return MetaOf(m.params).contains("progressToken") || env.log_level.has_value();
}

bool Server::IsQuick(const Message& m) const {
  if (m.method != "tools/call") return !MayStream(m.method);
  auto name = m.params.find("name");
  if (name == m.params.end() || !name->is_string()) return true;
  auto tool = registry_->FindTool(name->get<std::string>());
  return !tool || tool->quick;
}

std::optional<Json> Server::Handle(Json raw, RequestEnv& env) {
  Json id;
  Message m;
  try {
    m = Decode(std::move(raw), &id);
  } catch (const RpcError& e) {
    return MakeError(id, e);
  }
  if (m.kind != MessageKind::kRequest) {
    Accept(m, env);
    return std::nullopt;
  }
  try {
    Admit(m, env);
  } catch (const RpcError& e) {
    return MakeError(m.id, e);
  }
  return Dispatch(m, env);
}

void Server::Accept(const Message& m, RequestEnv& env) {
  if (m.kind == MessageKind::kResponse) {
    if (env.session) env.session->Deliver(m.id, m.result, m.error);
    return;
  }
  if (m.method == "notifications/cancelled") {
    auto rid = m.params.find("requestId");
    if (rid != m.params.end() && env.in_flight) env.in_flight->Cancel(*rid);
  }
  // notifications/initialized and anything else need no action.
}

bool Server::IsModernRequest(const Message& m, const std::optional<std::string>& header_version) {
  if (IsModernOnly(m.method)) return true;
  if (header_version && !IsLegacyVersion(*header_version)) return true;
  const Json& meta = MetaOf(m.params);
  for (auto it = meta.begin(); it != meta.end(); ++it)
    if (it.key().rfind("io.modelcontextprotocol/", 0) == 0) return true;
  return false;
}

void Server::Admit(const Message& m, RequestEnv& env) const {
  if (!IsModernRequest(m, env.header_version)) {
    env.era = Era::kLegacy;
    if (m.method == "initialize" || m.method == "ping") return;
    if (!env.session || !env.session->initialized()) {
      throw RpcError(kInvalidRequest,
                     "no session: send initialize first (legacy era), or carry _meta[\"" +
                         std::string(meta::kProtocolVersion) + "\"] = \"" + std::string(kModernVersion) + "\"");
    }
    env.version = env.session->protocol_version();
    env.client_capabilities = env.session->client_capabilities();
    env.log_level = env.session->log_level();
    return;
  }
  // Modern: validated in the order the specification's examples and the conformance
  // suite use — missing _meta keys, header mismatch, unsupported version.
  env.era = Era::kModern;
  const Json& meta = MetaOf(m.params);
  auto v = meta.find(meta::kProtocolVersion);
  auto caps = meta.find(meta::kClientCapabilities);
  std::string missing;
  if (v == meta.end()) missing = meta::kProtocolVersion;
  if (caps == meta.end()) missing += (missing.empty() ? "" : ", ") + std::string(meta::kClientCapabilities);
  if (!missing.empty())
    throw RpcError(kInvalidParams, "invalid params: missing _meta keys: " + missing);
  if (!v->is_string()) throw RpcError(kInvalidParams, std::string("_meta[\"") + meta::kProtocolVersion + "\"] must be a string");
  if (!caps->is_object())
    throw RpcError(kInvalidParams, std::string("_meta[\"") + meta::kClientCapabilities + "\"] must be an object");
  env.version = v->get<std::string>();
  if (env.header_version && *env.header_version != env.version) {
    throw RpcError(kHeaderMismatch, "MCP-Protocol-Version header (" + *env.header_version +
                                        ") does not match _meta protocolVersion (" + env.version + ")");
  }
  if (!IsModernVersion(env.version)) {
    Json supported = Json::array();
    for (const auto& s : ModernVersions()) supported.push_back(s);
    throw RpcError(kUnsupportedProtocolVersion, "Unsupported protocol version",
                   Json{{"supported", supported}, {"requested", env.version}});
  }
  env.client_capabilities = *caps;
  env.log_level.reset();
  if (auto lvl = meta.find(meta::kLogLevel); lvl != meta.end()) {
    LogLevel parsed;
    if (!lvl->is_string() || !ParseLogLevel(lvl->get<std::string>(), &parsed))
      throw RpcError(kInvalidParams, std::string("_meta[\"") + meta::kLogLevel + "\"] is not a log level");
    env.log_level = parsed;
  }
}

std::optional<Json> Server::Dispatch(const Message& m, RequestEnv& env) {
  // Transports that hand requests to another thread register them first (so a cancel
  // that overtakes the request still finds it); otherwise register here.
  if (env.in_flight && !env.cancel) env.cancel = env.in_flight->Begin(m.id);
  struct Done {
    InFlight* f;
    const Json& id;
    ~Done() {
      if (f) f->End(id);
    }
  } done{env.in_flight, m.id};
  try {
    if (m.method == "subscriptions/listen" && env.era == Era::kModern) return ListenForChanges(m, env);
    Json result = Run(m, env);
    // A cancelled request gets no response (legacy stdio: the client has moved on).
    if (env.era == Era::kLegacy && env.cancel && env.cancel->load() && m.method != "initialize") return std::nullopt;
    return MakeResult(m.id, Decorate(std::move(result), m.method, env));
  } catch (const RpcError& e) {
    return MakeError(m.id, e);
  } catch (const std::exception& e) {
    std::cerr << "mt: internal error in " << m.method << ": " << e.what() << "\n";
    return MakeError(m.id, RpcError(kInternalError, std::string("internal error: ") + e.what()));
  }
}

Json Server::Run(const Message& m, RequestEnv& env) {
  const std::string& method = m.method;
  if (env.era == Era::kModern && IsLegacyOnly(method)) {
    throw RpcError(kMethodNotFound, "method " + method + " does not exist in protocol version " + env.version);
  }
  if (env.era == Era::kLegacy && IsModernOnly(method)) {
    throw RpcError(kMethodNotFound, "method " + method + " needs protocol version " + std::string(kModernVersion));
  }
  if (method == "initialize") return Initialize(m, env);
  if (method == "ping") return Json::object();
  if (method == "server/discover") return Discover(env);
  if (method == "tools/list") return ListTools(m.params, env);
  if (method == "tools/call") return CallTool(m, env);
  if (method == "resources/list") return ListResources(m.params, env);
  if (method == "resources/templates/list") return ListResourceTemplates(m.params, env);
  if (method == "resources/read") return ReadResource(m, env);
  if (method == "prompts/list") return ListPrompts(m.params, env);
  if (method == "prompts/get") return GetPrompt(m, env);
  if (method == "completion/complete") return Complete(m.params);
  if (method.rfind("tasks/", 0) == 0) return TaskMethod(m, env);
  return RunLegacyOnly(m, env);
}

Json Server::RunLegacyOnly(const Message& m, RequestEnv& env) {
  if (m.method == "logging/setLevel") {
    LogLevel level;
    auto l = m.params.find("level");
    if (l == m.params.end() || !l->is_string() || !ParseLogLevel(l->get<std::string>(), &level))
      throw RpcError(kInvalidParams, "params.level must be one of debug, info, notice, warning, error, critical, alert, emergency");
    env.session->SetLogLevel(level);
    return Json::object();
  }
  if (m.method == "resources/subscribe" || m.method == "resources/unsubscribe") {
    std::string uri = RequireString(m.params, "uri");
    if (m.method == "resources/subscribe") env.session->Subscribe(uri);
    else env.session->Unsubscribe(uri);
    return Json::object();
  }
  throw RpcError(kMethodNotFound, "unknown method: " + m.method);
}

Json Server::Initialize(const Message& m, RequestEnv& env) {
  if (!env.session) throw RpcError(kInvalidRequest, "initialize needs a session-capable transport");
  std::string requested = m.params.value("protocolVersion", "");
  // Echo a version we speak, else offer our newest legacy one (the client decides).
  std::string version = IsLegacyVersion(requested) ? requested : std::string(kLatestLegacyVersion);
  Json caps = m.params.contains("capabilities") ? m.params["capabilities"] : Json::object();
  Json client_info = m.params.contains("clientInfo") ? m.params["clientInfo"] : Json();
  env.session->Initialize(version, caps, client_info);
  Json result = {{"protocolVersion", version},
                 {"capabilities", Capabilities()},
                 {"serverInfo", {{"name", info_.name}, {"version", info_.version}}}};
  if (!info_.title.empty()) result["serverInfo"]["title"] = info_.title;
  if (!info_.instructions.empty()) result["instructions"] = info_.instructions;
  return result;
}

Json Server::Discover(RequestEnv&) {
  Json versions = Json::array();
  for (const auto& v : ModernVersions()) versions.push_back(v);
  Json result = {{"supportedVersions", versions}, {"capabilities", Capabilities()}};
  result["capabilities"].erase("logging");   // deprecated in 2026-07-28: per-request logLevel instead
  if (options_.tasks.enabled) result["capabilities"]["extensions"][kTasksExtension] = Json::object();
  if (!info_.instructions.empty()) result["instructions"] = info_.instructions;
  return result;
}

Json Server::Decorate(Json result, const std::string& method, const RequestEnv& env) const {
  if (env.era != Era::kModern) return result;
  if (!result.contains("resultType")) result["resultType"] = "complete";
  if (result["resultType"] == "complete" && IsCacheable(method)) {
    if (!result.contains("ttlMs")) result["ttlMs"] = options_.list_ttl_ms;
    if (!result.contains("cacheScope")) result["cacheScope"] = "public";
  }
  Json server_info = {{"name", info_.name}, {"version", info_.version}};
  result["_meta"][meta::kServerInfo] = std::move(server_info);
  return result;
}

Json Server::ListTools(const Json& params, RequestEnv&) {
  return Page(registry_->Tools(), params, options_.page_size, "tools", [](const Tool& t) { return t.ToJson(); });
}

Server::Round Server::OpenRound(const Json& params, const RequestEnv& env,
                                const std::function<StateBinding()>& binding) {
  // Modern multi round-trip: earlier answers travel sealed in requestState; this
  // retry's inputResponses are added to them.
  Round round;
  if (env.era != Era::kModern) return round;
  if (auto rs = params.find("requestState"); rs != params.end() && !rs->is_null()) {
    if (!rs->is_string()) throw RpcError(kInvalidParams, "params.requestState must be a string");
    Json opened;
    try {
      opened = sealer_.Open(rs->get<std::string>(), binding());
    } catch (const RpcError& e) {
      if (options_.on_refusal) {
        StateBinding b = binding();
        options_.on_refusal(env.principal, b.method, b.name, std::string("requestState refused: ") + e.what());
      }
      throw;
    }
    round.answers = opened.value("answers", Json::object());
    round.state = opened.value("state", Json());
  }
  if (auto ir = params.find("inputResponses"); ir != params.end()) {
    if (!ir->is_object()) throw RpcError(kInvalidParams, "params.inputResponses must be an object");
    for (auto it = ir->begin(); it != ir->end(); ++it) round.answers[it.key()] = it.value();
  }
  return round;
}

Json Server::InputRequired(const InputRequiredSignal& need, const RequestContext& ctx, const StateBinding& binding) {
  Json requests = Json::object();
  for (const auto& q : need.requests) requests[q.key] = {{"method", q.method}, {"params", q.params}};
  return Json{{"resultType", "input_required"},
              {"inputRequests", std::move(requests)},
              {"requestState", sealer_.Seal(binding, {{"answers", ctx.answers()}, {"state", ctx.round_state()}})}};
}

Json Server::CallTool(const Message& m, RequestEnv& env) {
  std::string name = RequireString(m.params, "name");
  auto tool = registry_->FindTool(name);
  if (!tool) {
    if (options_.on_refusal) options_.on_refusal(env.principal, "tools/call", name, "unknown tool: " + name);
    throw RpcError(kInvalidParams, "unknown tool: " + name, Json{{"name", name}});
  }
  // Tasks are negotiated per request: only a modern request whose client capabilities
  // declare the extension may be answered with a task handle.
  const bool as_task = tool->task_support != TaskSupport::kNone && options_.tasks.enabled &&
                       env.era == Era::kModern && DeclaresTasks(env.client_capabilities);
  if (tool->task_support == TaskSupport::kRequired && !as_task)
    throw TasksExtensionRequired("tool " + name + " runs only as a task: it");
  Json args = m.params.contains("arguments") && !m.params["arguments"].is_null() ? m.params["arguments"]
                                                                               : Json::object();
  Json progress_token = MetaOf(m.params).value("progressToken", Json());

  // The state binding hashes the arguments: computed only when a state is involved.
  auto binding = [&] { return StateBinding{"tools/call", name, RequestStateSealer::Digest(args), env.principal.name}; };
  Round round = OpenRound(m.params, env, binding);

  if (auto err = CheckToolArguments(*tool, args)) return ToolResultJson(ToolResult::Error(*err));
  if (as_task) return CallToolAsTask(tool, args, env, std::move(round), progress_token, binding);

  RequestContext ctx(env, progress_token, std::move(round.answers), std::move(round.state));
  ToolResult r;
  try {
    r = tool->handler(args, ctx);
  } catch (const InputRequiredSignal& need) {
    return InputRequired(need, ctx, binding());
  } catch (const RpcError&) {
    throw;
  } catch (const std::exception& e) {
    r = ToolResult::Error("tool " + name + " failed: " + e.what());
  }
  return FinishToolResult(*tool, std::move(r));
}

Json Server::FinishToolResult(const Tool& tool, ToolResult r) {
  return ToolResultJson(CheckToolOutput(tool, std::move(r)));
}

Json Server::CallToolAsTask(const std::shared_ptr<const Tool>& tool, const Json& args, RequestEnv& env, Round round,
                            const Json& progress_token, const std::function<StateBinding()>& binding) {
  if (!tool->task_on_demand) {
    // A task from the start: durable before the handle goes out (tasks/get finds it at once).
    auto task = tasks_->Create(env.principal, tool->name);
    auto ctx = std::make_shared<TaskContext>(*tasks_, task, env.principal, env.client_capabilities,
                                             std::move(round.answers), std::move(round.state));
    Json created = tasks_->Created(*task);   // the seed state, before the handler can move it on
    try {
      task_threads_.Spawn([this, tool, args, ctx] { RunTaskHandler(tool, args, ctx); });
    } catch (const std::exception& e) {
      RpcError err(kInternalError, std::string("cannot start the task: ") + e.what());
      tasks_->Fail(*task, err);
      tasks_->Finished(*task);
      throw err;
    }
    return created;
  }
  // On demand: the handler runs on the task's thread as part of this request until it calls
  // ContinueAsTask() (→ the task handle), returns (→ its result), or needs input first
  // (→ input_required). This request waits for whichever comes first; its env and context
  // stay alive meanwhile, and the handler stops using them once it is a task.
  RequestContext pre(env, progress_token, std::move(round.answers), std::move(round.state));
  auto launch = std::make_shared<TaskLaunch>();
  auto ctx = std::make_shared<TaskContext>(*tasks_, tool->name, env.principal, env.client_capabilities, &pre, launch);
  task_threads_.Spawn([this, tool, args, ctx] { RunTaskHandler(tool, args, ctx); });
  switch (launch->Wait()) {
    case TaskLaunch::Outcome::kTask: return std::move(launch->created);
    case TaskLaunch::Outcome::kInputRequired: return InputRequired(launch->need, pre, binding());
    case TaskLaunch::Outcome::kError: throw *launch->error;
    default: return std::move(launch->result);
  }
}

void Server::RunTaskHandler(const std::shared_ptr<const Tool>& tool, const Json& args,
                            const std::shared_ptr<TaskContext>& ctx) {
  // Before ContinueAsTask (on-demand tools) outcomes go to the waiting request; after it,
  // to the task.
  auto settle = [&](std::optional<Json> result, std::optional<RpcError> error) {
    if (auto task = ctx->task()) {
      if (error) {
        tasks_->Fail(*task, *error);
      } else {
        // Inlined exactly as the call would have answered it (a 2026-07-28 CallToolResult).
        (*result)["resultType"] = "complete";
        tasks_->Complete(*task, std::move(*result));
      }
      tasks_->Finished(*task);
    } else if (error) {
      ctx->launch()->Failed(*error);
    } else {
      ctx->launch()->Answered(std::move(*result));
    }
  };
  try {
    ToolResult r;
    try {
      r = tool->handler(args, *ctx);
    } catch (const InputRequiredSignal&) {
      throw;
    } catch (const RpcError&) {
      throw;
    } catch (const std::exception& e) {
      r = ToolResult::Error("tool " + tool->name + " failed: " + e.what());
    }
    settle(FinishToolResult(*tool, std::move(r)), std::nullopt);
  } catch (const InputRequiredSignal& need) {
    if (!ctx->task()) ctx->launch()->NeedsInput(need);   // only the pre-task phase asks this way
    else settle(std::nullopt, RpcError(kInternalError, "tool " + tool->name + " asked for input the wrong way"));
  } catch (const RpcError& e) {
    settle(std::nullopt, e);
  } catch (...) {
    settle(std::nullopt, RpcError(kInternalError, "tool " + tool->name + " failed with an unknown exception"));
  }
}

Json Server::TaskMethod(const Message& m, RequestEnv& env) {
  // tasks/result and tasks/list (2025-11-25 experimental tasks) do not exist in the extension.
  const bool known = m.method == "tasks/get" || m.method == "tasks/update" || m.method == "tasks/cancel";
  if (env.era != Era::kModern || !options_.tasks.enabled || !known) throw RpcError(kMethodNotFound, "unknown method: " + m.method);
  if (!DeclaresTasks(env.client_capabilities)) throw TasksExtensionRequired(m.method);
  std::string id = RequireString(m.params, "taskId");
  try {
    if (m.method == "tasks/get") return tasks_->Get(id, env.principal);
    if (m.method == "tasks/update") {
      auto ir = m.params.find("inputResponses");
      if (ir == m.params.end() || !ir->is_object()) throw RpcError(kInvalidParams, "params.inputResponses must be an object");
      tasks_->Update(id, env.principal, *ir);
    } else {
      tasks_->Cancel(id, env.principal);
    }
  } catch (const RpcError& e) {
    // An id that is not the caller's (unknown, expired, or another principal's) is worth an
    // audit line: probing for task ids looks like this.
    if (options_.on_refusal && e.code() == kInvalidParams && std::string(e.what()) == kTaskNotFound)
      options_.on_refusal(env.principal, m.method, id.substr(0, 64), e.what());
    throw;
  }
  return Json::object();   // the empty acknowledgement (resultType "complete")
}

Json Server::ToolResultJson(ToolResult r) {
  Json out(Json::value_t::object);
  out["content"] = std::move(r.content);
  if (r.structured) out["structuredContent"] = std::move(*r.structured);
  if (r.is_error) out["isError"] = true;
  if (!r.meta.is_null()) out["_meta"] = std::move(r.meta);
  return out;
}

Json Server::ListResources(const Json& params, RequestEnv&) {
  return Page(registry_->Resources(), params, options_.page_size, "resources",
              [](const Resource& r) { return r.ToJson(); });
}

Json Server::ListResourceTemplates(const Json& params, RequestEnv&) {
  return Page(registry_->ResourceTemplates(), params, options_.page_size, "resourceTemplates",
              [](const ResourceTemplate& r) { return r.ToJson(); });
}

Json Server::ReadResource(const Message& m, RequestEnv& env) {
  std::string uri = RequireString(m.params, "uri");
  RequestContext ctx(env, MetaOf(m.params).value("progressToken", Json()), Json::object(), Json());
  std::vector<ResourceContents> contents;
  if (auto r = registry_->FindResource(uri)) {
    contents = r->read(uri, ctx);
  } else {
    std::map<std::string, std::string> vars;
    auto t = registry_->MatchTemplate(uri, &vars);
    if (!t) {
      int code = env.era == Era::kModern ? kInvalidParams : kResourceNotFoundLegacy;
      throw RpcError(code, "resource not found: " + uri, Json{{"uri", uri}});
    }
    contents = t->read(uri, vars, ctx);
  }
  if (contents.empty()) throw RpcError(kInvalidParams, "resource not found: " + uri, Json{{"uri", uri}});
  Json list = Json::array();
  for (const auto& c : contents) list.push_back(c.ToJson());
  return Json{{"contents", std::move(list)}};
}

Json Server::ListPrompts(const Json& params, RequestEnv&) {
  return Page(registry_->Prompts(), params, options_.page_size, "prompts", [](const Prompt& p) { return p.ToJson(); });
}

Json Server::GetPrompt(const Message& m, RequestEnv& env) {
  std::string name = RequireString(m.params, "name");
  auto prompt = registry_->FindPrompt(name);
  if (!prompt) throw RpcError(kInvalidParams, "unknown prompt: " + name, Json{{"name", name}});
  auto args = StringArgs(m.params);
  for (const auto& a : prompt->arguments)
    if (a.required && !args.count(a.name))
      throw RpcError(kInvalidParams, "prompt " + name + " needs argument '" + a.name + "'");
  auto binding = [&] {
    return StateBinding{"prompts/get", name, RequestStateSealer::Digest(m.params.value("arguments", Json::object())),
                        env.principal.name};
  };
  Round round = OpenRound(m.params, env, binding);
  RequestContext ctx(env, MetaOf(m.params).value("progressToken", Json()), std::move(round.answers),
                     std::move(round.state));
  try {
    PromptResult r = prompt->handler(args, ctx);
    Json out = {{"messages", r.messages}};
    if (!r.description.empty()) out["description"] = r.description;
    return out;
  } catch (const InputRequiredSignal& need) {
    return InputRequired(need, ctx, binding());
  }
}

Json Server::Complete(const Json& params) {
  auto ref = params.find("ref");
  auto arg = params.find("argument");
  if (ref == params.end() || !ref->is_object()) throw RpcError(kInvalidParams, "params.ref must be an object");
  if (arg == params.end() || !arg->is_object()) throw RpcError(kInvalidParams, "params.argument must be an object");
  std::string type = ref->value("type", "");
  std::string arg_name = arg->value("name", "");
  std::string prefix = arg->value("value", "");
  std::map<std::string, std::string> context;
  if (auto c = params.find("context"); c != params.end() && c->is_object()) context = StringArgs(*c);
  std::vector<std::string> values;
  if (type == "ref/prompt") {
    auto prompt = registry_->FindPrompt(ref->value("name", ""));
    if (!prompt) throw RpcError(kInvalidParams, "unknown prompt: " + ref->value("name", ""));
    if (prompt->complete) values = prompt->complete(arg_name, prefix, context);
  } else if (type == "ref/resource") {
    // Templates have no completers yet: an empty, well-formed answer.
  } else {
    throw RpcError(kInvalidParams, "params.ref.type must be ref/prompt or ref/resource");
  }
  size_t total = values.size();
  if (values.size() > 100) values.resize(100);
  return Json{{"completion", {{"values", values}, {"total", total}, {"hasMore", total > values.size()}}}};
}

std::optional<Json> Server::ListenForChanges(const Message& m, RequestEnv& env) {
  if (!env.channel || !env.channel->CanSend())
    throw RpcError(kInvalidRequest, "subscriptions/listen needs a stream (HTTP: Accept text/event-stream)");
  auto listen = std::make_shared<Listen>();
  listen->id = m.id;
  listen->channel = env.channel;
  const Json& n = m.params.value("notifications", Json::object());
  // Task status notifications (notifications/tasks) are optional and not sent: the ack lists
  // no taskIds, and clients poll tasks/get. Asking for them without the extension is -32021.
  if (n.contains("taskIds") && !DeclaresTasks(env.client_capabilities))
    throw TasksExtensionRequired("subscriptions/listen with notifications.taskIds");
  listen->tools = n.value("toolsListChanged", false);
  listen->prompts = n.value("promptsListChanged", false);
  listen->resources = n.value("resourcesListChanged", false);
  if (auto subs = n.find("resourceSubscriptions"); subs != n.end() && subs->is_array())
    for (const auto& s : *subs)
      if (s.is_string()) listen->uris.insert(s.get<std::string>());
  {
    // The ack echoes the part of the filter this server honours.
    Json honoured = Json::object();
    if (listen->tools) honoured["toolsListChanged"] = true;
    if (listen->prompts) honoured["promptsListChanged"] = true;
    if (listen->resources) honoured["resourcesListChanged"] = true;
    if (!listen->uris.empty()) honoured["resourceSubscriptions"] = listen->uris;
    std::lock_guard lock(listen->mu);
    env.channel->Send(MakeNotification("notifications/subscriptions/acknowledged",
                                       {{"notifications", honoured}, {"_meta", {{meta::kSubscriptionId, m.id}}}}));
  }
  {
    std::lock_guard lock(sessions_mu_);
    listens_.push_back(listen);
  }
  // Held open until the client cancels or goes away; there is no response.
  while (!(env.cancel && env.cancel->load()) && !env.channel->Closed()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::lock_guard lock(sessions_mu_);
  listens_.remove(listen);
  return std::nullopt;
}

void Server::Attach(const std::shared_ptr<LegacySession>& session) {
  std::lock_guard lock(sessions_mu_);
  sessions_.push_back(session);
}

void Server::Detach(const LegacySession* session) {
  std::lock_guard lock(sessions_mu_);
  sessions_.remove_if([session](const std::weak_ptr<LegacySession>& w) {
    auto s = w.lock();
    return !s || s.get() == session;
  });
}

Server::Audience Server::Snapshot() {
  Audience a;
  std::lock_guard lock(sessions_mu_);
  for (auto& w : sessions_)
    if (auto s = w.lock()) a.sessions.push_back(std::move(s));
  a.listens.assign(listens_.begin(), listens_.end());
  return a;
}

void Server::Broadcast(const Audience& to, const std::string& method, Json params,
                       const std::function<bool(const LegacySession&)>& session_wants,
                       const std::function<bool(const Listen&)>& listen_wants) {
  for (auto& s : to.sessions)
    if (session_wants(*s)) s->Notify(MakeNotification(method, params.empty() ? Json() : params));
  for (auto& l : to.listens) {
    if (!listen_wants(*l)) continue;
    Json p = params.empty() ? Json::object() : params;
    p["_meta"][meta::kSubscriptionId] = l->id;
    std::lock_guard lock(l->mu);
    l->channel->Send(MakeNotification(method, std::move(p)));
  }
}

void Server::OnRegistryChange(ListKind kind) {
  const char* method = kind == ListKind::kTools       ? "notifications/tools/list_changed"
                       : kind == ListKind::kPrompts   ? "notifications/prompts/list_changed"
                                                      : "notifications/resources/list_changed";
  Broadcast(Snapshot(), method, Json::object(), [](const LegacySession& s) { return s.initialized(); },
            [kind](const Listen& l) {
              return kind == ListKind::kTools ? l.tools : kind == ListKind::kPrompts ? l.prompts : l.resources;
            });
}

void Server::ResourceUpdated(const std::string& uri) {
  Broadcast(Snapshot(), "notifications/resources/updated", {{"uri", uri}},
            [&uri](const LegacySession& s) { return s.IsSubscribed(uri); },
            [&uri](const Listen& l) { return l.uris.count(uri) > 0; });
}

}  // namespace mt::mcp
