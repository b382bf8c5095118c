// libFuzzer target: raw bytes on a TCP connection to the real Streamable HTTP transport
// (cpp-httplib's parser behind mt's guarded stream: deadlines, header and body caps, chunked
// bodies, Host/Origin/token checks before the body, then the dispatcher). The server runs
// once, on a loopback port, with a bearer token and small limits; each input is one
// connection whose write side is closed after the bytes, so every request ends.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>

#include "mcp/http_transport.h"

namespace {

using namespace mt;
using namespace mt::mcp;

struct World {
  std::shared_ptr<Registry> registry = std::make_shared<Registry>();
  std::unique_ptr<Server> server;
  std::unique_ptr<HttpTransport> http;
  std::thread thread;
  int port = 0;
  World() {
    Tool echo;
    echo.name = "echo";
    echo.description = "echoes";
    echo.input_schema = Json::parse(R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})");
    echo.handler = [](const Json& a, CallContext&) { return ToolResult::Text(a["text"].get<std::string>()); };
    registry->AddTool(echo);
    server = std::make_unique<Server>(ServerInfo{}, registry);
    HttpOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.threads = 8;
    o.max_body_bytes = 64 * 1024;
    o.connections.header_timeout = std::chrono::milliseconds(500);
    o.connections.body_timeout = std::chrono::milliseconds(500);
    o.connections.idle_timeout = std::chrono::milliseconds(200);
    o.authenticate = [](const std::string& t) -> std::optional<Principal> {
      if (t == "fuzz-token") return Principal{"fuzz", "agent", true};
      return std::nullopt;
    };
    o.pages.push_back({"GET", "/page/(.+)", [](const httplib::Request& q, httplib::Response& s) {
                         s.set_content(q.matches[1].str(), "text/plain");
                       }});
    http = std::make_unique<HttpTransport>(*server, o);
    std::string err;
    if (!http->Bind(&err)) __builtin_trap();
    port = http->port();
    thread = std::thread([this] { http->Serve(); });
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World* w = new World();
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(w->port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) __builtin_trap();   // the server died
  size_t off = 0;
  while (off < size) {
    ssize_t n = ::send(fd, data + off, size - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += size_t(n);
  }
  ::shutdown(fd, SHUT_WR);
  char buf[16384];
  for (;;) {   // read until the server closes (bounded by its deadlines; 5 s here = a hang)
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, 5000);
    if (r == 0) __builtin_trap();   // no answer and no close within 5 s: the server hangs
    if (r < 0) break;
    if (::recv(fd, buf, sizeof buf, 0) <= 0) break;
  }
  ::close(fd);
  return 0;
}
