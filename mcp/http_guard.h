// Connection-level defences for the Streamable HTTP server (cpp-httplib underneath).
//
// cpp-httplib gives each connection a pool thread for its whole life and bounds only each
// single recv(): a client that dribbles a header byte every few seconds, or a chunked body
// forever, holds a thread indefinitely, and ~130 of them starve everyone (the health check
// included). Its payload limit covers Content-Length bodies only. So mt runs cpp-httplib's
// request parser on a stream of its own that enforces, per connection:
//   - phase deadlines: the request line + headers within `header_timeout`, the body within
//     `body_timeout`, the wait for a keep-alive connection's next request within
//     `idle_timeout`; a handler that is running (a tool call, an SSE stream) has none;
//   - byte caps: headers ≤ `max_header_bytes`, body ≤ `max_body_bytes` whether it comes with
//     Content-Length or chunked (413 with a clear message, then the connection is closed);
//   - at most `max_per_client` slow connections per client address: when a client opens
//     more, its oldest connection that has sat idle or half-sent for `grace` is closed, and
//     when every pool thread is taken the oldest such connection of anyone is; a running
//     handler is never closed, and a burst of fresh, fast connections is never refused;
//   - a bounded accept queue: beyond `max_queued` waiting connections, new ones are answered
//     503 at once instead of waiting behind the others;
// and the transport checks Host/Origin/token before the body is read (pre-routing), so an
// unauthenticated client never gets to upload a body at all.
#pragma once
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace mt::mcp {

struct ConnectionLimits {
  std::size_t threads = 128;                          // connections served at once
  std::size_t max_per_client = 64;                    // slow connections per client address
  std::chrono::milliseconds grace{2'000};             // a connection younger than this is never evicted
  std::size_t max_queued = 1024;                      // accepted connections waiting for a thread
  std::chrono::milliseconds header_timeout{10'000};   // request line + all headers
  std::chrono::milliseconds body_timeout{60'000};     // the whole body
  std::chrono::milliseconds idle_timeout{30'000};     // keep-alive wait for the next request
  std::chrono::milliseconds write_timeout{30'000};    // one blocked write
  std::size_t max_header_bytes = 64 * 1024;
  std::size_t max_body_bytes = 4 * 1024 * 1024;
  std::size_t max_requests_per_connection = 100'000;
};

enum class ConnPhase { kIdle, kHeaders, kBody, kHandling };

// One accepted connection as the guard sees it. `watch_fd` is a dup() of the socket, so a
// shutdown() from the watchdog can never hit a descriptor number that was closed and reused.
struct GuardedConnection {
  int watch_fd = -1;
  std::string client;                                  // peer address, no port
  // Written by the connection's own thread under the guard's lock, read by the watchdog.
  std::atomic<ConnPhase> phase{ConnPhase::kIdle};
  std::chrono::steady_clock::time_point deadline, opened, phase_since;
  std::atomic<bool> timed_out{false}, evicted{false};   // set by the watchdog / an eviction
  // The connection's own thread only.
  std::size_t header_bytes = 0, body_bytes = 0;
  bool header_over_cap = false, body_over_cap = false;
  bool must_close = false;   // the request was refused before its body was read
};

// The registry of live connections and the watchdog that enforces their deadlines.
class ConnectionGuard {
 public:
  explicit ConnectionGuard(ConnectionLimits limits);
  ~ConnectionGuard();

  // Registers a new connection; a client over its cap gives up its oldest slow one.
  std::shared_ptr<GuardedConnection> Admit(int sock);
  void Release(const std::shared_ptr<GuardedConnection>& c);
  void SetPhase(GuardedConnection& c, ConnPhase phase);
  // Closes the oldest connection (any client) that has been idle or receiving for at least
  // `grace`: room for a new one.
  bool EvictOne();
  void ShutdownAll();

  const ConnectionLimits& limits() const { return limits_; }

  // Set on a pool thread whose connection is to be answered 503 at once (queue overflow).
  static bool Shed();
  static void SetShed(bool shed);

  // The connection the calling pool thread serves (set while a request is processed), so
  // handlers and hooks running inside cpp-httplib can update its phase.
  static GuardedConnection* Current();
  static void SetCurrent(GuardedConnection* c);

 private:
  bool EvictLocked(const std::string* client);
  void Watch();

  ConnectionLimits limits_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::list<std::shared_ptr<GuardedConnection>> conns_;
  bool stop_ = false;
  std::thread watchdog_;
};

// httplib::Stream over a guarded socket: buffered reads bounded by the phase's deadline and
// byte cap, complete writes bounded by the write timeout.
class GuardedStream : public httplib::Stream {
 public:
  GuardedStream(int sock, GuardedConnection& conn, const ConnectionLimits& limits);
  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  int socket() const override { return sock_; }

  // Waits for the first byte of a next request (idle phase); false on timeout, close or stop.
  bool WaitForRequest(const std::function<bool()>& stopping);

 private:
  int PollIn(std::chrono::milliseconds cap) const;
  int sock_;
  GuardedConnection& conn_;
  const ConnectionLimits& limits_;
  std::vector<char> buf_;
  std::size_t off_ = 0, len_ = 0;
};

// The task queue cpp-httplib hands accepted sockets to: a fixed pool that, when every
// thread is taken, asks the guard to close the oldest connection not yet being handled.
class GuardedPool : public httplib::TaskQueue {
 public:
  GuardedPool(std::size_t threads, ConnectionGuard& guard);
  ~GuardedPool() override;
  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

 private:
  void Work();
  ConnectionGuard& guard_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::size_t busy_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// cpp-httplib's server with each connection served through GuardedStream.
class GuardedHttpServer : public httplib::Server {
 public:
  explicit GuardedHttpServer(ConnectionLimits limits);
  ConnectionGuard& guard() { return guard_; }
  // Wraps a route handler so its connection leaves the timed phases while it runs.
  Handler Handling(Handler h);
  // `check` runs once the headers are in, before any body byte is read; a request it
  // answers (Handled) closes the connection, since its body was never consumed.
  void SetPreBodyCheck(HandlerWithResponse check);
  // `h` answers errors; requests that broke a cap or a deadline get their specific status
  // (431, 413, 408) and message first.
  void SetErrorHandler(Handler h);

 private:
  bool process_and_close_socket(socket_t sock) override;
  ConnectionGuard guard_;
};

}  // namespace mt::mcp
