// The /metrics HTTP server: one event-loop thread owns every connection (non-blocking
// sockets, poll), and a small pool of worker threads runs the scrapes. A connection
// costs a file descriptor and a few kilobytes, never a thread, so idle or slow clients
// cannot starve scrapes (hardening issue #14, finding 9: civetweb's thread-per-
// connection model stopped answering while 4 idle connections were open).
//
// Bounds, all per connection and enforced by the event loop:
//   * request_timeout: a request head must be complete this long after the connection
//     opened (or after its first byte, on a kept-alive connection); else 408 and close.
//     A client dribbling a byte a second is cut off here.
//   * max_request_bytes: a longer head gets 431 and close.
//   * idle_timeout: a kept-alive connection with no new request is closed.
//   * write_timeout: a response not taken by the client in this time is dropped.
//   * max_connections: at the limit, a new connection evicts an existing one: the
//     oldest that is idle or still sending its head, else the oldest writing one, else
//     the oldest waiting for its scrape. New connections are always admitted.
//   * max_unsent_bytes: responses not yet taken by their clients; over it, the oldest
//     writing connections are dropped.
// Scrapes: requests that are waiting when a worker becomes free are answered by that
// worker from one collection (each of them arrived before it started, so none gets
// older data than it asked for). exposer_* and mt_exporter_http_* metrics are added to
// every scrape.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <prometheus/metric_family.h>

namespace mt::exporter {

struct ListenAddress {
  std::string host;  // IPv4/IPv6 literal (without brackets) or a name
  uint16_t port = 0;
};
// "HOST:PORT" or "[IPV6]:PORT"; PORT 0 picks a free port. Sets *error on failure.
std::optional<ListenAddress> ParseListenAddress(std::string_view text, std::string* error);

struct HttpRequestHead {
  std::string method;
  std::string target;
  bool http10 = false;
  bool keep_alive = false;    // HTTP/1.1 unless "Connection: close"; HTTP/1.0 only with "keep-alive"
  bool accepts_gzip = false;  // Accept-Encoding lists gzip with q > 0
  bool has_body = false;      // Content-Length > 0 or Transfer-Encoding
};
enum class HeadParse { kIncomplete, kComplete, kBad };
// Parses the request head at the start of `buf` (it ends at the first empty line). On
// kComplete, *head_bytes is its length including the empty line; on kBad, *error says why.
HeadParse ParseRequestHead(std::string_view buf, HttpRequestHead* head, size_t* head_bytes, std::string* error);
bool AcceptsGzip(std::string_view accept_encoding);

// Which connection to close when a new one arrives at max_connections: the oldest in the
// first non-empty class of (idle or reading or closing), writing, pending. -1 if none.
enum class ConnState { kReading, kPending, kWriting, kIdle, kClosing };
struct ConnAge {
  uint64_t id;
  ConnState state;
  std::chrono::steady_clock::time_point since;  // when it entered the state
};
int64_t ChooseEvictionVictim(const std::vector<ConnAge>& conns);

// gzip (RFC 1952) of `data`; empty on failure.
std::string GzipCompress(std::string_view data);

struct HttpServerOptions {
  std::string listen = "127.0.0.1:9400";
  size_t max_connections = 128;
  std::chrono::milliseconds request_timeout{5000};
  std::chrono::milliseconds idle_timeout{30000};
  std::chrono::milliseconds write_timeout{10000};
  size_t max_request_bytes = 8192;
  int workers = 2;
  size_t max_unsent_bytes = 32u << 20;
};

class HttpServer {
 public:
  // `collect` gives the families of one scrape; it runs on the worker threads.
  using CollectFn = std::function<std::vector<prometheus::MetricFamily>()>;
  HttpServer(HttpServerOptions options, CollectFn collect);
  ~HttpServer();  // Stop()

  // Binds, listens and starts the threads. False with *error when it cannot listen.
  bool Start(std::string* error);
  uint16_t port() const;
  // Stops accepting, closes every connection and joins the threads.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mt::exporter
