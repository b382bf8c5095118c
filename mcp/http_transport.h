// Streamable HTTP transport (cpp-httplib): one endpoint (default /mcp) for both eras.
//  - legacy: `initialize` opens a session (Mcp-Session-Id); GET opens its notification
//    stream; DELETE ends it; server→client requests ride the POST's SSE response and the
//    client POSTs the answers back;
//  - modern (2026-07-28): stateless POSTs; MCP-Protocol-Version / Mcp-Method / Mcp-Name
//    headers must agree with the body; GET and DELETE are 405.
// Every request passes the Host and Origin checks (DNS-rebinding protection → 403) and,
// when tokens are configured, bearer authentication (→ 401). Bodies over the limit → 413.
// Requests that may stream (tools/call, prompts/get, resources/read, subscriptions/listen)
// are answered as SSE when the client accepts it; everything else as plain JSON.
#pragma once
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "mcp/http_guard.h"
#include "mcp/json_parse.h"
#include "mcp/server.h"

namespace httplib {
class Server;
class Request;
class Response;
}  // namespace httplib

namespace mt::mcp {

// A page served beside the MCP endpoint (reports, the approval page). The transport applies
// its Host/Origin checks before the handler runs; the handler does its own authentication
// (browsers send cookies, not bearer tokens). `pattern` is a cpp-httplib path pattern.
struct PageRoute {
  std::string method;   // GET | POST
  std::string pattern;  // e.g. "/reports/(.+)"
  std::function<void(const httplib::Request&, httplib::Response&)> handler;
};

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8765;                                  // 0 = any free port
  std::string endpoint = "/mcp";
  std::vector<std::string> allowed_origins;        // exact origins besides loopback ones
  std::vector<std::string> allowed_hosts;          // host names besides loopback ones
  size_t max_body_bytes = JsonLimits{}.max_bytes;  // Content-Length and chunked bodies alike
  size_t max_json_depth = JsonLimits{}.max_depth;
  size_t threads = 128;                             // connections served at once
  // Per-connection deadlines, header cap and per-client cap (mcp/http_guard.h); `threads`
  // and `max_body_bytes` above override the fields of the same meaning.
  ConnectionLimits connections;
  size_t max_sessions = 10'000;
  std::chrono::seconds session_idle_timeout{3600};
  // Bearer-token check; unset = no authentication (only sensible on loopback).
  std::function<std::optional<Principal>(const std::string& token)> authenticate;
  std::vector<PageRoute> pages;                     // extra routes (see PageRoute)
};

class HttpTransport {
 public:
  HttpTransport(Server& server, HttpOptions options);
  ~HttpTransport();

  // Binds the socket; false with `*error` set on failure. After it, port() is known.
  bool Bind(std::string* error);
  int port() const { return port_; }
  // Serves until Stop().
  void Serve();
  void Stop();

 private:
  class SseChannel;
  struct GetStream;

  void HandlePost(const httplib::Request& req, httplib::Response& res);
  // The steps of HandlePost.
  bool ReadPostedMessage(const httplib::Request& req, httplib::Response& res, Message* m);
  bool BindLegacySession(const httplib::Request& req, httplib::Response& res, const Message& m, RequestEnv& env,
                         std::shared_ptr<LegacySession>* session);
  void ReplyQuick(const Message& m, RequestEnv& env, httplib::Response& res);
  void ReplyAsStream(const Message& m, std::shared_ptr<RequestEnv> env, std::shared_ptr<LegacySession> session,
                     httplib::Response& res);
  void ReplyPlain(const Message& m, RequestEnv& env, httplib::Response& res);
  void HandleGet(const httplib::Request& req, httplib::Response& res);
  void HandleDelete(const httplib::Request& req, httplib::Response& res);
  bool CheckSecurity(const httplib::Request& req, httplib::Response& res, Principal* who);
  bool CheckHostAndOrigin(const httplib::Request& req, httplib::Response& res);
  std::shared_ptr<LegacySession> FindSession(const std::string& id);
  std::shared_ptr<LegacySession> NewSession(std::string* error);
  void ReapIdleSessions();

  Server& server_;
  HttpOptions options_;
  std::unique_ptr<GuardedHttpServer> http_;
  int port_ = 0;

  std::mutex sessions_mu_;
  std::map<std::string, std::shared_ptr<LegacySession>> sessions_;
  std::map<std::string, std::shared_ptr<GetStream>> get_streams_;
};

}  // namespace mt::mcp
