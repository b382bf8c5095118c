#include "mcp/http_transport.h"

#include <httplib.h>
#include <openssl/rand.h>
#include <sys/socket.h>

#include <condition_variable>
#include <deque>
#include <iostream>
#include <stdexcept>

#include "base/strings.h"
#include "mcp/base64.h"
#include "mcp/json_parse.h"
#include "mcp/param_headers.h"

namespace mt::mcp {

namespace {

constexpr const char* kSessionHeader = "Mcp-Session-Id";
constexpr const char* kVersionHeader = "MCP-Protocol-Version";

std::string Lower(std::string s) {
  for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool IsLoopbackName(const std::string& host) {
  return host == "localhost" || host == "127.0.0.1" || host == "[::1]" || host == "::1";
}

// "host:port" / "[v6]:port" → host, lower-cased.
std::string HostPart(const std::string& authority) {
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    return Lower(close == std::string::npos ? authority : authority.substr(0, close + 1));
  }
  size_t colon = authority.find(':');
  return Lower(colon == std::string::npos ? authority : authority.substr(0, colon));
}

std::string NewSessionId() {
  unsigned char raw[16];
  if (RAND_bytes(raw, sizeof raw) != 1) throw std::runtime_error("RAND_bytes failed");
  return HexEncode(std::string_view(reinterpret_cast<const char*>(raw), sizeof raw));
}

std::string SseEvent(const Json& message) {
  return "event: message\ndata: " + message.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n\n";
}

// HTTP status for a JSON-RPC error answered as plain JSON.
int StatusFor(int code, Era era) {
  switch (code) {
    case kParseError:
    case kInvalidRequest: return 400;
    case kMethodNotFound: return era == Era::kModern ? 404 : 200;
    case kInvalidParams:
    case kHeaderMismatch:
    case kMissingRequiredClientCapability:
    case kUnsupportedProtocolVersion: return era == Era::kModern ? 400 : 200;
    case kTooManyTasks: return era == Era::kModern ? 429 : 200;
    default: return 200;
  }
}

void SendJson(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
}

void SendRpcError(httplib::Response& res, int status, const Json& id, const RpcError& e) {
  SendJson(res, status, MakeError(id, e));
}

bool Accepts(const httplib::Request& req, const char* type) {
  std::string accept = Lower(req.get_header_value("Accept"));
  return accept.empty() || accept.find(type) != std::string::npos || accept.find("*/*") != std::string::npos;
}

// HTTP's optional white space around a field value (RFC 9110 §5.5) is " \t" only.
std::string TrimOws(const std::string& v) { return std::string(base::Trim(v, " \t")); }

// Header values may carry non-ASCII text as "=?base64?…?=" (2026-07-28 routing headers).
std::string DecodeHeaderValue(const std::string& v) {
  if (v.size() >= 12 && v.rfind("=?base64?", 0) == 0 && v.compare(v.size() - 2, 2, "?=") == 0) {
    if (auto d = Base64Decode(v.substr(9, v.size() - 11))) return *d;
  }
  return v;
}

// 2026-07-28 routing headers: Mcp-Method on every request, Mcp-Name on the calls that
// name a primitive (and, Tasks extension, on tasks/get|update|cancel: the taskId); both must
// equal the body (values are case-sensitive). A tools/call's Mcp-Param-* headers must equal
// the arguments its tool marks with x-mcp-header.
void CheckRoutingHeaders(const httplib::Request& req, const Message& m, const Registry& registry) {
  if (!req.has_header("Mcp-Method")) throw RpcError(kHeaderMismatch, "Missing Mcp-Method header");
  if (DecodeHeaderValue(TrimOws(req.get_header_value("Mcp-Method"))) != m.method)
    throw RpcError(kHeaderMismatch, "Mcp-Method header does not match the body's method " + m.method);
  const bool task_method = m.method == "tasks/get" || m.method == "tasks/update" || m.method == "tasks/cancel";
  const char* key = m.method == "resources/read" ? "uri"
                    : (m.method == "tools/call" || m.method == "prompts/get") ? "name"
                    : task_method                                              ? "taskId"
                                                                               : nullptr;
  // A body without a string name is invalid params, reported by the dispatcher.
  if (!key || !m.params.contains(key) || !m.params[key].is_string()) return;
  std::string body = m.params[key].get<std::string>();
  if (!req.has_header("Mcp-Name")) throw RpcError(kHeaderMismatch, "Missing Mcp-Name header");
  if (DecodeHeaderValue(TrimOws(req.get_header_value("Mcp-Name"))) != body)
    throw RpcError(kHeaderMismatch, "Mcp-Name header does not match the body's " + std::string(key));
  if (m.method == "tools/call") {
    if (auto tool = registry.FindTool(m.params["name"].get<std::string>())) {
      auto args = m.params.find("arguments");
      CheckParamHeaders(tool->input_schema, args != m.params.end() ? *args : Json(),
                        [&req](const std::string& name) -> std::optional<std::string> {
                          if (!req.has_header(name)) return std::nullopt;
                          return TrimOws(req.get_header_value(name));
                        });
    }
  }
}

}  // namespace

// SSE response of one POST: messages are written as events as they happen.
class HttpTransport::SseChannel : public Channel {
 public:
  explicit SseChannel(httplib::DataSink& sink) : sink_(sink) {}
  bool CanSend() const override { return true; }
  bool Send(const Json& message) override {
    std::lock_guard lock(mu_);
    if (closed_) return false;
    std::string ev = SseEvent(message);
    if (!sink_.is_writable() || !sink_.write(ev.data(), ev.size())) closed_ = true;
    return !closed_;
  }
  bool Closed() const override {
    std::lock_guard lock(mu_);
    return closed_ || !sink_.is_writable();
  }

 private:
  httplib::DataSink& sink_;
  mutable std::mutex mu_;
  bool closed_ = false;
};

// Collects what a quick handler sends before its response.
class BufferChannel : public Channel {
 public:
  bool CanSend() const override { return true; }
  bool Send(const Json& message) override {
    messages.push_back(message);
    return true;
  }
  std::vector<Json> messages;
};

// The legacy GET stream of a session: notifications queue here, the stream drains them.
struct HttpTransport::GetStream {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> events;
  bool ended = false;
};

namespace {
ConnectionLimits LimitsFrom(const HttpOptions& o) {
  ConnectionLimits l = o.connections;
  l.threads = o.threads;
  l.max_body_bytes = o.max_body_bytes;
  return l;
}
}  // namespace

HttpTransport::HttpTransport(Server& server, HttpOptions options)
    : server_(server), options_(std::move(options)), http_(std::make_unique<GuardedHttpServer>(LimitsFrom(options_))) {
  http_->set_tcp_nodelay(true);   // SSE replies are several small writes: no Nagle stalls
  const std::string ep = options_.endpoint;
  // Host/Origin (every route) and the bearer token (the MCP endpoint) are checked as soon as
  // the headers are in, before a byte of body is read; handlers check again (cheap) so that
  // each stays correct on its own.
  http_->SetPreBodyCheck([this, ep](const httplib::Request& q, httplib::Response& s) {
    Principal who;
    bool ok = q.path == ep ? CheckSecurity(q, s, &who) : CheckHostAndOrigin(q, s);
    return ok ? httplib::Server::HandlerResponse::Unhandled : httplib::Server::HandlerResponse::Handled;
  });
  auto handling = [this](httplib::Server::Handler h) { return http_->Handling(std::move(h)); };
  http_->Post(ep, handling([this](const httplib::Request& q, httplib::Response& s) { HandlePost(q, s); }));
  http_->Get(ep, handling([this](const httplib::Request& q, httplib::Response& s) { HandleGet(q, s); }));
  http_->Delete(ep, handling([this](const httplib::Request& q, httplib::Response& s) { HandleDelete(q, s); }));
  auto not_allowed = [](const httplib::Request&, httplib::Response& s) {
    s.status = 405;
    s.set_header("Allow", "GET, POST, DELETE");
    s.set_content("{\"error\":\"method not allowed\"}", "application/json");
  };
  http_->Put(ep, not_allowed);
  http_->Patch(ep, not_allowed);
  http_->Options(ep, not_allowed);
  // Liveness for load balancers and monitors: no token needed (it reveals nothing), but the
  // Host check still applies.
  http_->Get("/healthz", handling([this](const httplib::Request& q, httplib::Response& s) {
    if (!CheckHostAndOrigin(q, s)) return;
    s.set_content("{\"status\":\"ok\"}", "application/json");
  }));
  for (const auto& page : options_.pages) {
    auto handler = handling([this, h = page.handler](const httplib::Request& q, httplib::Response& s) {
      if (CheckHostAndOrigin(q, s)) h(q, s);
    });
    if (page.method == "GET") http_->Get(page.pattern, handler);
    else if (page.method == "POST") http_->Post(page.pattern, handler);
    else throw std::invalid_argument("PageRoute method must be GET or POST, got " + page.method);
  }
  http_->SetErrorHandler([](const httplib::Request&, httplib::Response& s) {
    if (!s.body.empty()) return;
    const char* msg = s.status == 413 ? "request body too large" : s.status == 404 ? "not found" : "error";
    s.set_content(std::string("{\"error\":\"") + msg + "\"}", "application/json");
  });
}

HttpTransport::~HttpTransport() { Stop(); }

bool HttpTransport::Bind(std::string* error) {
  // cpp-httplib listens with a backlog of 5, so bursts of new connections wait for SYN
  // retransmits. Keep the socket to raise the backlog once it is listening.
  int listen_fd = -1;
  http_->set_socket_options([&listen_fd](int fd) {
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listen_fd = fd;
  });
  if (options_.port == 0) {
    port_ = http_->bind_to_any_port(options_.host);
  } else {
    port_ = http_->bind_to_port(options_.host, options_.port) ? options_.port : -1;
  }
  if (port_ <= 0) {
    *error = "cannot listen on " + options_.host + ":" + std::to_string(options_.port) + " (in use or not permitted)";
    return false;
  }
  if (listen_fd >= 0) ::listen(listen_fd, SOMAXCONN);
  http_->set_socket_options([](int) {});
  return true;
}

void HttpTransport::Serve() { http_->listen_after_bind(); }

void HttpTransport::Stop() {
  {
    std::lock_guard lock(sessions_mu_);
    for (auto& [id, g] : get_streams_) {
      std::lock_guard l(g->mu);
      g->ended = true;
      g->cv.notify_all();
    }
    for (auto& [id, s] : sessions_) s->in_flight().CancelAll();
  }
  if (http_) http_->stop();
}

bool HttpTransport::CheckSecurity(const httplib::Request& req, httplib::Response& res, Principal* who) {
  if (!CheckHostAndOrigin(req, res)) return false;
  if (options_.authenticate) {
    std::string auth = req.get_header_value("Authorization");
    std::optional<Principal> p;
    if (auth.size() > 7 && Lower(auth.substr(0, 7)) == "bearer ") p = options_.authenticate(auth.substr(7));
    if (!p) {
      res.set_header("WWW-Authenticate", "Bearer realm=\"mt\"");
      SendJson(res, 401, {{"error", auth.empty() ? "unauthorized: a bearer token is required"
                                                 : "unauthorized: the bearer token is not valid"}});
      return false;
    }
    *who = *p;
  } else {
    *who = Principal{"http", "agent", false};
  }
  return true;
}

bool HttpTransport::CheckHostAndOrigin(const httplib::Request& req, httplib::Response& res) {
  // DNS rebinding: a page on another site must not reach a loopback server.
  std::string host = HostPart(req.get_header_value("Host"));
  bool host_ok = host.empty() ? false : IsLoopbackName(host);
  for (const auto& h : options_.allowed_hosts) host_ok = host_ok || Lower(h) == host;
  if (!host_ok) {
    SendJson(res, 403, {{"error", "forbidden: Host '" + req.get_header_value("Host") + "' is not allowed"}});
    return false;
  }
  if (req.has_header("Origin")) {
    std::string origin = Lower(req.get_header_value("Origin"));
    bool ok = false;
    for (const char* scheme : {"http://", "https://"}) {
      if (origin.rfind(scheme, 0) == 0) ok = ok || IsLoopbackName(HostPart(origin.substr(strlen(scheme))));
    }
    for (const auto& o : options_.allowed_origins) ok = ok || Lower(o) == origin;
    if (!ok) {
      SendJson(res, 403, {{"error", "forbidden: Origin '" + req.get_header_value("Origin") + "' is not allowed"}});
      return false;
    }
  }
  return true;
}

std::shared_ptr<LegacySession> HttpTransport::FindSession(const std::string& id) {
  std::lock_guard lock(sessions_mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return nullptr;
  it->second->Touch();
  return it->second;
}

void HttpTransport::ReapIdleSessions() {
  auto cutoff = std::chrono::steady_clock::now() - options_.session_idle_timeout;
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (it->second->last_used() < cutoff && !get_streams_.count(it->first)) {
      server_.Detach(it->second.get());
      it = sessions_.erase(it);
    } else {
      ++it;
    }
  }
}

std::shared_ptr<LegacySession> HttpTransport::NewSession(std::string* error) {
  std::lock_guard lock(sessions_mu_);
  ReapIdleSessions();
  if (sessions_.size() >= options_.max_sessions) {
    *error = "too many open sessions; close one with DELETE first";
    return nullptr;
  }
  auto s = std::make_shared<LegacySession>(NewSessionId());
  sessions_[s->id()] = s;
  server_.Attach(s);
  return s;
}

void HttpTransport::HandlePost(const httplib::Request& req, httplib::Response& res) {
  Principal who;
  if (!CheckSecurity(req, res, &who)) return;
  Message m;
  if (!ReadPostedMessage(req, res, &m)) return;

  auto env = std::make_shared<RequestEnv>();
  env->principal = who;
  if (req.has_header(kVersionHeader)) env->header_version = req.get_header_value(kVersionHeader);
  bool modern = Server::IsModernRequest(m, env->header_version);

  std::shared_ptr<LegacySession> session;
  if (modern) {
    if (m.kind == MessageKind::kRequest && !env->header_version) {
      SendRpcError(res, 400, m.id, RpcError(kHeaderMismatch, "Missing MCP-Protocol-Version header"));
      return;
    }
  } else if (!BindLegacySession(req, res, m, *env, &session)) {
    return;
  }

  if (m.kind != MessageKind::kRequest) {
    server_.Accept(m, *env);
    res.status = 202;
    return;
  }
  try {
    server_.Admit(m, *env);
    if (modern) CheckRoutingHeaders(req, m, server_.registry());
  } catch (const RpcError& e) {
    SendRpcError(res, StatusFor(e.code(), env->era), m.id, e);
    return;
  }

  bool stream = Server::WantsStream(m, *env) && Accepts(req, "text/event-stream");
  if (stream && server_.IsQuick(m)) ReplyQuick(m, *env, res);
  else if (stream) ReplyAsStream(m, env, session, res);
  else ReplyPlain(m, *env, res);
}

// The JSON-RPC message of a POST: its media type, Accept and body checked, then decoded.
// False when an error was sent instead.
bool HttpTransport::ReadPostedMessage(const httplib::Request& req, httplib::Response& res, Message* m) {
  std::string ctype = Lower(req.get_header_value("Content-Type"));
  if (ctype.rfind("application/json", 0) != 0) {
    SendJson(res, 415, {{"error", "unsupported media type: POST a JSON-RPC message as application/json"}});
    return false;
  }
  if (!Accepts(req, "application/json") && !Accepts(req, "text/event-stream")) {
    SendJson(res, 406, {{"error", "not acceptable: Accept must include application/json and text/event-stream"}});
    return false;
  }
  JsonParseResult parsed = ParseUntrustedJson(req.body, JsonLimits{options_.max_body_bytes, options_.max_json_depth});
  if (!parsed.ok()) {
    SendRpcError(res, 400, nullptr, RpcError(kParseError, "parse error: the body is " + parsed.error));
    return false;
  }
  Json raw = std::move(parsed.value);
  Json id;
  try {
    *m = server_.Decode(std::move(raw), &id);
  } catch (const RpcError& e) {
    SendRpcError(res, 400, id, e);
    return false;
  }
  return true;
}

// Legacy era: `initialize` opens a session, every other message names an open one.
// False when an error was sent instead.
bool HttpTransport::BindLegacySession(const httplib::Request& req, httplib::Response& res, const Message& m,
                                      RequestEnv& env, std::shared_ptr<LegacySession>* session_out) {
  std::shared_ptr<LegacySession>& session = *session_out;
  if (env.header_version && !IsLegacyVersion(*env.header_version)) {
    SendRpcError(res, 400, m.id,
                 RpcError(kInvalidRequest, "unsupported MCP-Protocol-Version: " + *env.header_version));
    return false;
  }
  std::string sid = req.get_header_value(kSessionHeader);
  if (m.method == "initialize" && m.kind == MessageKind::kRequest) {
    if (!sid.empty()) {
      SendRpcError(res, 400, m.id, RpcError(kInvalidRequest, "initialize must not carry an Mcp-Session-Id"));
      return false;
    }
    std::string err;
    session = NewSession(&err);
    if (!session) {
      SendRpcError(res, 503, m.id, RpcError(kInternalError, err));
      return false;
    }
    res.set_header(kSessionHeader, session->id());
  } else if (sid.empty()) {
    SendRpcError(res, 400, m.kind == MessageKind::kRequest ? m.id : Json(),
                 RpcError(kInvalidRequest, "bad request: Mcp-Session-Id header is required (send initialize first)"));
    return false;
  } else if (!(session = FindSession(sid))) {
    SendRpcError(res, 404, m.kind == MessageKind::kRequest ? m.id : Json(),
                 RpcError(kInvalidRequest, "session not found: it ended or never existed; initialize again"));
    return false;
  }
  env.session = session.get();
  env.in_flight = &session->in_flight();
  return true;
}

// A quick handler never waits on the client: run it now, and answer as plain JSON
// unless it produced messages to go before the response (then one SSE body).
void HttpTransport::ReplyQuick(const Message& m, RequestEnv& env, httplib::Response& res) {
  BufferChannel buffer;
  env.channel = &buffer;
  auto reply = server_.Dispatch(m, env);
  env.channel = nullptr;
  if (buffer.messages.empty()) {
    if (reply) SendJson(res, 200, *reply);
    else res.status = 202;
    return;
  }
  std::string body;
  for (const auto& msg : buffer.messages) body += SseEvent(msg);
  if (reply) body += SseEvent(*reply);
  res.set_header("Cache-Control", "no-cache");
  res.set_content(body, "text/event-stream");
}

// An SSE response the handler writes to as it runs (the session is kept alive with it).
void HttpTransport::ReplyAsStream(const Message& m, std::shared_ptr<RequestEnv> env,
                                  std::shared_ptr<LegacySession> session, httplib::Response& res) {
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream", [this, m, env, session](size_t, httplib::DataSink& sink) {
        SseChannel channel(sink);
        env->channel = &channel;
        if (auto reply = server_.Dispatch(m, *env)) channel.Send(*reply);
        env->channel = nullptr;
        sink.done();
        return true;
      });
}

void HttpTransport::ReplyPlain(const Message& m, RequestEnv& env, httplib::Response& res) {
  NullChannel none;
  env.channel = &none;
  auto reply = server_.Dispatch(m, env);
  env.channel = nullptr;
  if (!reply) {
    res.status = 202;
    return;
  }
  int status = 200;
  if (reply->contains("error")) status = StatusFor((*reply)["error"].value("code", 0), env.era);
  SendJson(res, status, *reply);
}

void HttpTransport::HandleGet(const httplib::Request& req, httplib::Response& res) {
  Principal who;
  if (!CheckSecurity(req, res, &who)) return;
  std::string version = req.get_header_value(kVersionHeader);
  std::string sid = req.get_header_value(kSessionHeader);
  if (IsModernVersion(version) || sid.empty()) {
    res.status = 405;
    res.set_header("Allow", "POST");
    res.set_content("{\"error\":\"method not allowed: no standalone stream without a legacy session\"}",
                    "application/json");
    return;
  }
  if (!Accepts(req, "text/event-stream")) {
    SendJson(res, 406, {{"error", "not acceptable: GET needs Accept: text/event-stream"}});
    return;
  }
  auto session = FindSession(sid);
  if (!session) {
    SendJson(res, 404, {{"error", "session not found"}});
    return;
  }
  auto stream = std::make_shared<GetStream>();
  {
    std::lock_guard lock(sessions_mu_);
    if (get_streams_.count(sid)) {
      SendJson(res, 409, {{"error", "conflict: this session already has a GET stream"}});
      return;
    }
    get_streams_[sid] = stream;
  }
  session->SetNotifier([stream](const Json& m) {
    std::lock_guard lock(stream->mu);
    if (stream->ended) return false;
    stream->events.push_back(SseEvent(m));
    stream->cv.notify_all();
    return true;
  });
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked_content_provider(
      "text/event-stream", [this, stream, session, sid](size_t, httplib::DataSink& sink) {
        std::unique_lock lock(stream->mu);
        // Comment line first so clients see the stream open at once.
        std::string hello = ": stream open\n\n";
        bool ok = sink.write(hello.data(), hello.size());
        while (ok && !stream->ended) {
          stream->cv.wait_for(lock, std::chrono::seconds(15), [&] { return stream->ended || !stream->events.empty(); });
          std::string out;
          while (!stream->events.empty()) {
            out += stream->events.front();
            stream->events.pop_front();
          }
          if (out.empty()) out = ": keep-alive\n\n";
          lock.unlock();
          ok = sink.is_writable() && sink.write(out.data(), out.size());
          lock.lock();
        }
        stream->ended = true;
        lock.unlock();
        session->SetNotifier(nullptr);
        {
          std::lock_guard l(sessions_mu_);
          if (auto it = get_streams_.find(sid); it != get_streams_.end() && it->second == stream) get_streams_.erase(it);
        }
        sink.done();
        return true;
      });
}

void HttpTransport::HandleDelete(const httplib::Request& req, httplib::Response& res) {
  Principal who;
  if (!CheckSecurity(req, res, &who)) return;
  std::string sid = req.get_header_value(kSessionHeader);
  if (IsModernVersion(req.get_header_value(kVersionHeader)) || sid.empty()) {
    res.status = 405;
    res.set_header("Allow", "POST");
    res.set_content("{\"error\":\"method not allowed: DELETE ends a legacy session and needs Mcp-Session-Id\"}",
                    "application/json");
    return;
  }
  std::shared_ptr<LegacySession> session;
  std::shared_ptr<GetStream> stream;
  {
    std::lock_guard lock(sessions_mu_);
    auto it = sessions_.find(sid);
    if (it == sessions_.end()) {
      SendJson(res, 404, {{"error", "session not found"}});
      return;
    }
    session = it->second;
    sessions_.erase(it);
    if (auto g = get_streams_.find(sid); g != get_streams_.end()) stream = g->second;
  }
  session->in_flight().CancelAll();
  server_.Detach(session.get());
  if (stream) {
    std::lock_guard l(stream->mu);
    stream->ended = true;
    stream->cv.notify_all();
  }
  res.status = 200;
}

}  // namespace mt::mcp
