#include "mcp/http_guard.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace mt::mcp {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

thread_local GuardedConnection* tls_current = nullptr;
thread_local bool tls_shed = false;

// Room for chunk-size lines and trailers on top of the body itself.
constexpr std::size_t kChunkFramingSlack = 64 * 1024;

std::string AddressOf(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(ss).sin_addr, buf, sizeof buf);
  } else if (ss.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(ss).sin6_addr, buf, sizeof buf);
  }
  return buf;
}

int PortOf(const sockaddr_storage& ss) {
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(ss).sin_port);
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(ss).sin6_port);
  return 0;
}

std::string PeerAddress(int sock) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getpeername(sock, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  return AddressOf(ss);
}

milliseconds Left(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
  return left.count() < 0 ? milliseconds(0) : left;
}

bool Timed(ConnPhase p) { return p != ConnPhase::kHandling; }

void WriteAll(int sock, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::send(sock, s.data() + off, s.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) return;
    off += size_t(n);
  }
}

// A request refused before its body was read (413 from Content-Length, 401, 403) leaves the
// body in flight; closing now would reset the connection and the client, still sending,
// might never read the answer. Half-close, then discard what arrives for a short, bounded
// while (what nginx calls a lingering close).
void LingeringClose(int sock) {
  ::shutdown(sock, SHUT_WR);
  const auto until = Clock::now() + milliseconds(2000);
  std::size_t drained = 0;
  char buf[16 * 1024];
  while (drained < (64u << 20)) {
    auto left = Left(until);
    if (left.count() == 0) break;
    pollfd p{sock, POLLIN, 0};
    if (::poll(&p, 1, int(left.count())) <= 0) break;
    ssize_t n = ::recv(sock, buf, sizeof buf, 0);
    if (n <= 0) break;
    drained += size_t(n);
  }
}

}  // namespace

// ---- ConnectionGuard -------------------------------------------------------------------

ConnectionGuard::ConnectionGuard(ConnectionLimits limits) : limits_(limits), watchdog_([this] { Watch(); }) {}

ConnectionGuard::~ConnectionGuard() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  watchdog_.join();
  std::lock_guard lock(mu_);
  for (auto& c : conns_) {
    if (c->watch_fd >= 0) ::close(c->watch_fd);
    c->watch_fd = -1;
  }
}

GuardedConnection* ConnectionGuard::Current() { return tls_current; }
bool ConnectionGuard::Shed() { return tls_shed; }
void ConnectionGuard::SetShed(bool shed) { tls_shed = shed; }
void ConnectionGuard::SetCurrent(GuardedConnection* c) { tls_current = c; }

std::shared_ptr<GuardedConnection> ConnectionGuard::Admit(int sock) {
  auto c = std::make_shared<GuardedConnection>();
  c->client = PeerAddress(sock);
  c->opened = c->phase_since = Clock::now();
  std::lock_guard lock(mu_);
  size_t same = 0;
  for (const auto& o : conns_) same += o->client == c->client && !o->evicted;
  if (same >= limits_.max_per_client) EvictLocked(&c->client);
  c->watch_fd = ::dup(sock);
  c->phase = ConnPhase::kIdle;
  c->deadline = Clock::now() + limits_.idle_timeout;
  conns_.push_back(c);
  return c;
}

void ConnectionGuard::Release(const std::shared_ptr<GuardedConnection>& c) {
  std::lock_guard lock(mu_);
  conns_.remove(c);
  if (c->watch_fd >= 0) ::close(c->watch_fd);
  c->watch_fd = -1;
}

void ConnectionGuard::SetPhase(GuardedConnection& c, ConnPhase phase) {
  std::lock_guard lock(mu_);
  c.phase = phase;
  auto now = Clock::now();
  c.phase_since = now;
  switch (phase) {
    case ConnPhase::kIdle: c.deadline = now + limits_.idle_timeout; break;
    case ConnPhase::kHeaders:
      c.deadline = now + limits_.header_timeout;
      c.header_bytes = c.body_bytes = 0;
      break;
    case ConnPhase::kBody: c.deadline = now + limits_.body_timeout; break;
    case ConnPhase::kHandling: c.deadline = Clock::time_point::max(); break;
  }
}

bool ConnectionGuard::EvictLocked(const std::string* client) {
  // Prefer a connection waiting idle, then the one that has been sending its request longest.
  std::shared_ptr<GuardedConnection> victim;
  const auto now = Clock::now();
  for (const auto& c : conns_) {
    if (c->evicted || !Timed(c->phase) || (client && c->client != *client)) continue;
    if (now - c->phase_since < limits_.grace) continue;   // fresh: its request may be on its way
    if (!victim || (c->phase == ConnPhase::kIdle && victim->phase != ConnPhase::kIdle) ||
        (c->phase == victim->phase && c->opened < victim->opened))
      victim = c;
  }
  if (!victim) return false;
  victim->evicted = true;
  if (victim->watch_fd >= 0) ::shutdown(victim->watch_fd, SHUT_RDWR);
  return true;
}

bool ConnectionGuard::EvictOne() {
  std::lock_guard lock(mu_);
  return EvictLocked(nullptr);
}

void ConnectionGuard::ShutdownAll() {
  std::lock_guard lock(mu_);
  for (auto& c : conns_)
    if (c->watch_fd >= 0) ::shutdown(c->watch_fd, SHUT_RDWR);
}

void ConnectionGuard::Watch() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, milliseconds(200));
    auto now = Clock::now();
    for (auto& c : conns_) {
      if (!Timed(c->phase) || c->timed_out || now < c->deadline) continue;
      c->timed_out = true;
      if (c->watch_fd >= 0) ::shutdown(c->watch_fd, SHUT_RDWR);
    }
  }
}

// ---- GuardedStream ---------------------------------------------------------------------

GuardedStream::GuardedStream(int sock, GuardedConnection& conn, const ConnectionLimits& limits)
    : sock_(sock), conn_(conn), limits_(limits), buf_(16 * 1024) {}

int GuardedStream::PollIn(milliseconds cap) const {
  pollfd p{sock_, POLLIN, 0};
  for (;;) {
    int r = ::poll(&p, 1, int(cap.count()));
    if (r < 0 && errno == EINTR) continue;
    return r;
  }
}

bool GuardedStream::is_readable() const {
  if (off_ < len_) return true;
  return PollIn(Left(conn_.deadline)) > 0;
}

bool GuardedStream::is_writable() const {
  pollfd p{sock_, POLLOUT, 0};
  int r = ::poll(&p, 1, int(limits_.write_timeout.count()));
  if (r <= 0 || (p.revents & (POLLERR | POLLHUP | POLLNVAL))) return false;
  // Like cpp-httplib: a peer that has gone away is not writable (SSE streams stop).
  pollfd q{sock_, POLLIN, 0};
  if (::poll(&q, 1, 0) <= 0) return true;
  char b;
  return ::recv(sock_, &b, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

ssize_t GuardedStream::read(char* ptr, size_t size) {
  if (off_ >= len_) {
    if (conn_.timed_out || conn_.evicted) return -1;
    if (PollIn(Left(conn_.deadline)) <= 0) {
      conn_.timed_out = true;
      return -1;
    }
    ssize_t n;
    do n = ::recv(sock_, buf_.data(), buf_.size(), 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0) return n;
    off_ = 0;
    len_ = size_t(n);
  }
  size_t n = std::min(size, len_ - off_);
  // Caps count what the parser consumes, so bytes of a pipelined next request that are
  // already buffered are charged to that request, not this one.
  if (conn_.phase == ConnPhase::kHeaders) {
    conn_.header_bytes += n;
    if (conn_.header_bytes > limits_.max_header_bytes) {
      conn_.header_over_cap = true;
      return -1;
    }
  } else if (conn_.phase == ConnPhase::kBody) {
    conn_.body_bytes += n;
    if (conn_.body_bytes > limits_.max_body_bytes + kChunkFramingSlack) {
      conn_.body_over_cap = true;
      return -1;
    }
  }
  std::copy(buf_.data() + off_, buf_.data() + off_ + n, ptr);
  off_ += n;
  return ssize_t(n);
}

ssize_t GuardedStream::write(const char* ptr, size_t size) {
  size_t done = 0;
  while (done < size) {
    pollfd p{sock_, POLLOUT, 0};
    int r = ::poll(&p, 1, int(limits_.write_timeout.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    ssize_t n = ::send(sock_, ptr + done, size - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    done += size_t(n);
  }
  return ssize_t(done);
}

namespace {
// getpeername / getsockname into an address and a port (unchanged on failure).
void NameOf(int (*get)(int, sockaddr*, socklen_t*), int sock, std::string& ip, int& port) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (get(sock, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
    ip = AddressOf(ss);
    port = PortOf(ss);
  }
}
}  // namespace

void GuardedStream::get_remote_ip_and_port(std::string& ip, int& port) const { NameOf(::getpeername, sock_, ip, port); }
void GuardedStream::get_local_ip_and_port(std::string& ip, int& port) const { NameOf(::getsockname, sock_, ip, port); }

bool GuardedStream::WaitForRequest(const std::function<bool()>& stopping) {
  if (off_ < len_) return true;   // pipelined: the next request is already here
  while (!stopping()) {
    if (conn_.timed_out || conn_.evicted) return false;
    auto left = Left(conn_.deadline);
    if (left.count() == 0) return false;
    int r = PollIn(std::min(left, milliseconds(100)));
    if (r < 0) return false;
    if (r > 0) return true;
  }
  return false;
}

// ---- GuardedPool -----------------------------------------------------------------------

GuardedPool::GuardedPool(std::size_t threads, ConnectionGuard& guard) : guard_(guard) {
  for (std::size_t i = 0; i < std::max<std::size_t>(threads, 1); ++i) threads_.emplace_back([this] { Work(); });
}

GuardedPool::~GuardedPool() { shutdown(); }

void GuardedPool::enqueue(std::function<void()> fn) {
  bool full;
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= guard_.limits().max_queued) {
      // Answered 503 by whichever thread takes it, at once, rather than after the others.
      fn = [fn = std::move(fn)] {
        ConnectionGuard::SetShed(true);
        fn();
        ConnectionGuard::SetShed(false);
      };
    }
    queue_.push_back(std::move(fn));
    full = busy_ + queue_.size() > threads_.size();
  }
  cv_.notify_one();
  // Every thread is taken: make room by closing the oldest connection that is idle or
  // still sending its request (a slow or stalled client), never a running handler.
  if (full) guard_.EvictOne();
}

void GuardedPool::shutdown() {
  {
    std::lock_guard lock(mu_);
    if (stop_ && threads_.empty()) return;
    stop_ = true;
  }
  cv_.notify_all();
  guard_.ShutdownAll();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void GuardedPool::Work() {
  for (;;) {
    std::function<void()> fn;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;   // stopping and drained
      fn = std::move(queue_.front());
      queue_.pop_front();
      ++busy_;
    }
    fn();
    std::lock_guard lock(mu_);
    --busy_;
  }
}

// ---- GuardedHttpServer -----------------------------------------------------------------

GuardedHttpServer::GuardedHttpServer(ConnectionLimits limits) : guard_(limits) {
  new_task_queue = [this] { return new GuardedPool(guard_.limits().threads, guard_); };
  set_payload_max_length(limits.max_body_bytes);
}

httplib::Server::Handler GuardedHttpServer::Handling(Handler h) {
  return [this, h = std::move(h)](const httplib::Request& req, httplib::Response& res) {
    // The request has been read in full: what follows may legitimately take long (a tool
    // call, an SSE stream), so the connection leaves the timed phases.
    if (auto* c = ConnectionGuard::Current()) guard_.SetPhase(*c, ConnPhase::kHandling);
    h(req, res);
  };
}

void GuardedHttpServer::SetPreBodyCheck(HandlerWithResponse check) {
  set_pre_routing_handler([this, check = std::move(check)](const httplib::Request& req, httplib::Response& res) {
    auto* c = ConnectionGuard::Current();
    if (c) guard_.SetPhase(*c, ConnPhase::kBody);
    if (req.has_header("Content-Length")) {
      // Refused from the header alone: reading (or skipping) the body first would hand a
      // thread to whoever announces gigabytes.
      const std::string& v = req.get_header_value("Content-Length");
      char* end = nullptr;
      errno = 0;
      unsigned long long len = std::strtoull(v.c_str(), &end, 10);
      if (errno != 0 || end == v.c_str() || *end != '\0' || len > guard_.limits().max_body_bytes) {
        res.status = 413;
        res.set_content("{\"error\":\"request body too large (Content-Length " + v.substr(0, 24) + ", limit " +
                            std::to_string(guard_.limits().max_body_bytes) + " bytes)\"}",
                        "application/json");
        if (c) c->must_close = true;
        return HandlerResponse::Handled;
      }
    }
    HandlerResponse r = check ? check(req, res) : HandlerResponse::Unhandled;
    if (r == HandlerResponse::Handled && c) c->must_close = true;
    return r;
  });
}

void GuardedHttpServer::SetErrorHandler(Handler h) {
  set_error_handler([this, h = std::move(h)](const httplib::Request& req, httplib::Response& res) {
    if (auto* c = ConnectionGuard::Current()) {
      const auto& l = guard_.limits();
      std::string msg;
      if (c->header_over_cap) {
        res.status = 431;
        msg = "request headers too large (limit " + std::to_string(l.max_header_bytes) + " bytes)";
      } else if (c->body_over_cap) {
        res.status = 413;
        msg = "request body too large (limit " + std::to_string(l.max_body_bytes) + " bytes, chunked or not)";
      } else if (c->timed_out && c->phase != ConnPhase::kHandling) {
        res.status = 408;
        msg = "request not received in time";
      }
      if (!msg.empty()) {
        c->must_close = true;
        res.set_content("{\"error\":\"" + msg + "\"}", "application/json");
        return;
      }
    }
    h(req, res);
  });
}

bool GuardedHttpServer::process_and_close_socket(socket_t sock) {
  if (ConnectionGuard::Shed()) {
    std::string body = "{\"error\":\"server busy: too many connections waiting; retry shortly\"}";
    WriteAll(sock, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
                   "Retry-After: 1\r\nContent-Length: " +
                       std::to_string(body.size()) + "\r\n\r\n" + body);
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return false;
  }
  auto conn = guard_.Admit(sock);
  GuardedStream strm(sock, *conn, guard_.limits());
  auto stopping = [this] { return svr_sock_ == INVALID_SOCKET; };
  bool ok = true;
  for (std::size_t served = 0; served < guard_.limits().max_requests_per_connection; ++served) {
    guard_.SetPhase(*conn, ConnPhase::kIdle);
    if (!strm.WaitForRequest(stopping)) break;
    guard_.SetPhase(*conn, ConnPhase::kHeaders);
    bool closed = false;
    ConnectionGuard::SetCurrent(conn.get());
    ok = process_request(strm, served + 1 == guard_.limits().max_requests_per_connection, closed, nullptr);
    ConnectionGuard::SetCurrent(nullptr);
    if (!ok || closed || conn->must_close || conn->timed_out || conn->evicted) break;
  }
  if (conn->must_close && !conn->timed_out && !conn->evicted) LingeringClose(sock);
  guard_.Release(conn);
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

}  // namespace mt::mcp
