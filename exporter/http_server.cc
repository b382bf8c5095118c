#include "exporter/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/summary.h>
#include <prometheus/text_serializer.h>

namespace mt::exporter {

namespace {

using Clock = std::chrono::steady_clock;

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::strchr("!#$%&'*+-.^_`|~", c) != nullptr && c != '\0';
}

// Each comma-separated element of a header value, trimmed.
template <typename F>
void ForEachElement(std::string_view value, F f) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    f(TrimOws(value.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
}

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    default: return "Error";
  }
}

}  // namespace

std::optional<ListenAddress> ParseListenAddress(std::string_view text, std::string* error) {
  ListenAddress a;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      *error = "expected [IPV6]:PORT, got '" + std::string(text) + "'";
      return std::nullopt;
    }
    a.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      *error = "expected HOST:PORT (for example 127.0.0.1:9400 or 0.0.0.0:9400), got '" + std::string(text) + "'";
      return std::nullopt;
    }
    a.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
    if (a.host.find(':') != std::string::npos) {
      *error = "an IPv6 address goes in brackets, for example [::1]:9400; got '" + std::string(text) + "'";
      return std::nullopt;
    }
  }
  if (a.host.empty()) {
    *error = "no host in '" + std::string(text) + "' (use 0.0.0.0:PORT for every interface)";
    return std::nullopt;
  }
  unsigned v = 0;
  auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), v);
  if (port.empty() || ec != std::errc() || p != port.data() + port.size() || v > 65535) {
    *error = "invalid port '" + std::string(port) + "' in '" + std::string(text) + "'";
    return std::nullopt;
  }
  a.port = static_cast<uint16_t>(v);
  return a;
}

bool AcceptsGzip(std::string_view accept_encoding) {
  bool gzip = false;
  ForEachElement(accept_encoding, [&](std::string_view e) {
    size_t semi = e.find(';');
    std::string_view coding = TrimOws(e.substr(0, semi));
    if (!IEquals(coding, "gzip") && !IEquals(coding, "x-gzip")) return;
    bool zero = false;
    if (semi != std::string_view::npos) {
      std::string_view params = e.substr(semi + 1);
      // q=0, q=0.0, q=0.000 disable it.
      size_t q = params.find('=');
      if (q != std::string_view::npos && IEquals(TrimOws(params.substr(0, q)), "q")) {
        std::string_view qv = TrimOws(params.substr(q + 1));
        zero = !qv.empty() && qv.front() == '0' && qv.find_first_not_of("0.") == std::string_view::npos;
      }
    }
    if (!zero) gzip = true;
  });
  return gzip;
}

HeadParse ParseRequestHead(std::string_view buf, HttpRequestHead* head, size_t* head_bytes, std::string* error) {
  // RFC 9112 §2.2: empty lines before the request line are ignored.
  size_t start = 0;
  while (start < buf.size() && (buf[start] == '\r' || buf[start] == '\n')) ++start;
  std::string_view rest = buf.substr(start);
  // The head ends at the first empty line (CRLF CRLF, or a bare LF LF).
  size_t end = std::string_view::npos;
  size_t term = 0;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] != '\n') continue;
    if (i + 1 < rest.size() && rest[i + 1] == '\n') {
      end = i + 1;
      term = 1;
      break;
    }
    if (i + 2 < rest.size() && rest[i + 1] == '\r' && rest[i + 2] == '\n') {
      end = i + 1;
      term = 2;
      break;
    }
  }
  if (end == std::string_view::npos) return HeadParse::kIncomplete;
  *head_bytes = start + end + term;
  std::string_view text = rest.substr(0, end);

  *head = HttpRequestHead{};
  auto next_line = [&text]() {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  };
  std::string_view line = next_line();
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    *error = "malformed request line";
    return HeadParse::kBad;
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (method.empty() || !std::all_of(method.begin(), method.end(), IsTokenChar) || target.empty()) {
    *error = "malformed request line";
    return HeadParse::kBad;
  }
  if (version == "HTTP/1.0") head->http10 = true;
  else if (version != "HTTP/1.1") {
    *error = "unsupported HTTP version";
    return HeadParse::kBad;
  }
  head->method = std::string(method);
  head->target = std::string(target);
  bool close = false;
  bool keep_alive = false;
  while (!text.empty()) {
    line = next_line();
    if (line.empty()) break;
    size_t colon = line.find(':');
    if (colon == 0 || colon == std::string_view::npos || line.front() == ' ' || line.front() == '\t') {
      *error = "malformed header line";
      return HeadParse::kBad;
    }
    std::string_view name = line.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), IsTokenChar)) {
      *error = "malformed header name";
      return HeadParse::kBad;
    }
    std::string_view value = TrimOws(line.substr(colon + 1));
    if (IEquals(name, "connection")) {
      ForEachElement(value, [&](std::string_view t) {
        if (IEquals(t, "close")) close = true;
        if (IEquals(t, "keep-alive")) keep_alive = true;
      });
    } else if (IEquals(name, "accept-encoding")) {
      if (AcceptsGzip(value)) head->accepts_gzip = true;
    } else if (IEquals(name, "content-length")) {
      if (value.find_first_not_of('0') != std::string_view::npos) head->has_body = true;
    } else if (IEquals(name, "transfer-encoding")) {
      head->has_body = true;
    }
  }
  head->keep_alive = head->http10 ? (keep_alive && !close) : !close;
  return HeadParse::kComplete;
}

int64_t ChooseEvictionVictim(const std::vector<ConnAge>& conns) {
  auto rank = [](ConnState s) {
    switch (s) {
      case ConnState::kIdle:
      case ConnState::kReading:
      case ConnState::kClosing: return 0;
      case ConnState::kWriting: return 1;
      case ConnState::kPending: return 2;
    }
    return 2;
  };
  const ConnAge* best = nullptr;
  for (const auto& c : conns) {
    // Oldest first; among equal ages (accepted in one batch) the lower id, accepted first.
    if (best == nullptr || rank(c.state) < rank(best->state) ||
        (rank(c.state) == rank(best->state) &&
         (c.since < best->since || (c.since == best->since && c.id < best->id)))) {
      best = &c;
    }
  }
  return best == nullptr ? -1 : static_cast<int64_t>(best->id);
}

std::string GzipCompress(std::string_view data) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, MAX_WBITS + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
  std::string out;
  out.resize(deflateBound(&zs, static_cast<uLong>(data.size())));
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  size_t n = zs.total_out;
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) return {};
  out.resize(n);
  return out;
}

// ---------------------------------------------------------------------------------------

struct HttpServer::Impl {
  struct Conn {
    int fd = -1;
    uint64_t id = 0;
    ConnState state = ConnState::kReading;
    Clock::time_point since;
    Clock::time_point deadline;
    std::string in;
    std::string head;                         // response head (small bodies included)
    std::shared_ptr<const std::string> body;  // scrape body, shared by one batch
    size_t sent = 0;
    bool close_after = false;
    bool peer_eof = false;  // the client half-closed after sending its request
    bool http10 = false;
    bool keep_alive_header = false;
  };
  struct Job {
    uint64_t conn;
    bool gzip;
    Clock::time_point received;
  };
  struct Done {
    uint64_t conn;
    std::shared_ptr<const std::string> body;
    bool gzip;
  };

  HttpServerOptions options;
  CollectFn collect;
  int listen_fd = -1;
  int wake_fd = -1;
  uint16_t port = 0;
  std::atomic<bool> stopping{false};
  std::thread io;
  std::vector<std::thread> workers;

  // Owned by the io thread.
  std::unordered_map<uint64_t, Conn> conns;
  uint64_t next_id = 1;
  Clock::time_point accept_paused_until{};

  std::mutex jobs_mu;
  std::condition_variable jobs_cv;
  std::vector<Job> jobs;
  std::mutex done_mu;
  std::vector<Done> done;

  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Counter* bytes_transferred = nullptr;
  prometheus::Counter* scrapes = nullptr;
  prometheus::Summary* latencies = nullptr;
  prometheus::Gauge* open_connections = nullptr;
  prometheus::Family<prometheus::Counter>* closed = nullptr;
  std::map<std::string, prometheus::Counter*> closed_by_reason;

  Impl(HttpServerOptions o, CollectFn c) : options(std::move(o)), collect(std::move(c)) {
    bytes_transferred = &prometheus::BuildCounter()
                             .Name("exposer_transferred_bytes_total")
                             .Help("Transferred bytes to metrics services")
                             .Register(*registry)
                             .Add({});
    scrapes = &prometheus::BuildCounter()
                   .Name("exposer_scrapes_total")
                   .Help("Number of times metrics were scraped")
                   .Register(*registry)
                   .Add({});
    latencies = &prometheus::BuildSummary()
                     .Name("exposer_request_latencies")
                     .Help("Latencies of serving scrape requests, in microseconds")
                     .Register(*registry)
                     .Add({}, prometheus::Summary::Quantiles{{0.5, 0.05}, {0.9, 0.01}, {0.99, 0.001}});
    open_connections = &prometheus::BuildGauge()
                            .Name("mt_exporter_http_connections")
                            .Help("HTTP connections open now.")
                            .Register(*registry)
                            .Add({});
    closed = &prometheus::BuildCounter()
                  .Name("mt_exporter_http_connections_closed_total")
                  .Help("HTTP connections the exporter closed, by reason: request_timeout (no complete "
                        "request in time), idle_timeout, write_timeout, evicted (connection or buffer limit), "
                        "bad_request, too_large.")
                  .Register(*registry);
    for (const char* r : {"request_timeout", "idle_timeout", "write_timeout", "evicted", "bad_request", "too_large"}) {
      closed_by_reason[r] = &closed->Add({{"reason", r}});
    }
  }

  void CountClose(const char* reason) {
    auto it = closed_by_reason.find(reason);
    if (it != closed_by_reason.end()) it->second->Increment();
  }

  void Wake() {
    uint64_t one = 1;
    ssize_t n = ::write(wake_fd, &one, sizeof one);
    (void)n;
  }

  // ---- workers ------------------------------------------------------------------------

  void WorkerLoop() {
    const prometheus::TextSerializer serializer;
    for (;;) {
      std::vector<Job> batch;
      {
        std::unique_lock lock(jobs_mu);
        jobs_cv.wait(lock, [&] { return stopping.load() || !jobs.empty(); });
        if (stopping) return;
        batch.swap(jobs);
      }
      std::vector<prometheus::MetricFamily> families = collect();
      for (auto& f : registry->Collect()) families.push_back(std::move(f));
      auto body = std::make_shared<const std::string>(serializer.Serialize(families));
      families.clear();
      std::shared_ptr<const std::string> gz;
      if (std::any_of(batch.begin(), batch.end(), [](const Job& j) { return j.gzip; })) {
        std::string z = GzipCompress(*body);
        if (!z.empty()) gz = std::make_shared<const std::string>(std::move(z));
      }
      std::vector<Done> out;
      auto now = Clock::now();
      for (const Job& j : batch) {
        bool use_gz = j.gzip && gz != nullptr;
        const auto& b = use_gz ? gz : body;
        out.push_back({j.conn, b, use_gz});
        scrapes->Increment();
        bytes_transferred->Increment(static_cast<double>(b->size()));
        latencies->Observe(static_cast<double>(
            std::chrono::duration_cast<std::chrono::microseconds>(now - j.received).count()));
      }
      {
        std::lock_guard lock(done_mu);
        for (auto& d : out) done.push_back(std::move(d));
      }
      Wake();
    }
  }

  // ---- connections ----------------------------------------------------------------------

  void Close(uint64_t id, const char* reason) {
    auto it = conns.find(id);
    if (it == conns.end()) return;
    if (reason != nullptr) CountClose(reason);
    ::close(it->second.fd);
    conns.erase(it);
    open_connections->Set(static_cast<double>(conns.size()));
  }

  void Enter(Conn& c, ConnState s, Clock::time_point now) {
    c.state = s;
    c.since = now;
    switch (s) {
      case ConnState::kReading: c.deadline = now + options.request_timeout; break;
      case ConnState::kIdle: c.deadline = now + options.idle_timeout; break;
      case ConnState::kWriting: c.deadline = now + options.write_timeout; break;
      case ConnState::kClosing: c.deadline = now + std::chrono::milliseconds(1000); break;
      case ConnState::kPending: c.deadline = Clock::time_point::max(); break;
    }
  }

  void EvictOne() {
    std::vector<ConnAge> ages;
    ages.reserve(conns.size());
    for (const auto& [id, c] : conns) ages.push_back({id, c.state, c.since});
    int64_t victim = ChooseEvictionVictim(ages);
    if (victim >= 0) Close(static_cast<uint64_t>(victim), "evicted");
  }

  void AcceptNew(Clock::time_point now) {
    for (int i = 0; i < 64; ++i) {
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: make room and retry shortly instead of spinning.
          EvictOne();
          accept_paused_until = now + std::chrono::milliseconds(100);
        }
        return;
      }
      if (conns.size() >= options.max_connections) EvictOne();
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      Conn c;
      c.fd = fd;
      c.id = next_id++;
      Enter(c, ConnState::kReading, now);
      conns.emplace(c.id, std::move(c));
      open_connections->Set(static_cast<double>(conns.size()));
    }
  }

  void Respond(Conn& c, int status, std::string_view extra_headers, Clock::time_point now) {
    std::string body = std::to_string(status) + " " + Reason(status) + "\n";
    c.close_after = true;  // errors end the connection (the rest of the input is not trusted)
    c.head = "HTTP/1.1 " + std::to_string(status) + " " + Reason(status) +
             "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " + std::to_string(body.size()) +
             "\r\n" + std::string(extra_headers) + "Connection: close\r\n\r\n" + body;
    c.body.reset();
    c.sent = 0;
    Enter(c, ConnState::kWriting, now);
  }

  // Returns false if the connection was closed.
  bool TryParse(Conn& c, Clock::time_point now) {
    HttpRequestHead h;
    size_t n = 0;
    std::string error;
    switch (ParseRequestHead(c.in, &h, &n, &error)) {
      case HeadParse::kIncomplete:
        if (c.peer_eof) {
          Close(c.id, nullptr);
          return false;
        }
        if (c.in.size() >= options.max_request_bytes) {
          CountClose("too_large");
          Respond(c, 431, "", now);
          return Flush(c, now);
        }
        return true;
      case HeadParse::kBad:
        CountClose("bad_request");
        Respond(c, 400, "", now);
        return Flush(c, now);
      case HeadParse::kComplete:
        break;
    }
    c.in.erase(0, n);
    c.http10 = h.http10;
    std::string_view path = h.target;
    path = path.substr(0, path.find('?'));
    if (path != "/metrics") {
      Respond(c, 404, "", now);
      return Flush(c, now);
    }
    if (h.method != "GET") {
      Respond(c, 405, "Allow: GET\r\n", now);
      return Flush(c, now);
    }
    c.close_after = !h.keep_alive || h.has_body || c.peer_eof;
    c.keep_alive_header = h.http10 && !c.close_after;
    Enter(c, ConnState::kPending, now);
    {
      std::lock_guard lock(jobs_mu);
      jobs.push_back({c.id, h.accepts_gzip, now});
    }
    jobs_cv.notify_one();
    return true;
  }

  // Sends what it can. Returns false if the connection was closed.
  bool Flush(Conn& c, Clock::time_point now) {
    for (;;) {
      size_t total = c.head.size() + (c.body ? c.body->size() : 0);
      if (c.sent >= total) break;
      iovec iov[2];
      int n_iov = 0;
      if (c.sent < c.head.size()) {
        iov[n_iov++] = {const_cast<char*>(c.head.data()) + c.sent, c.head.size() - c.sent};
        if (c.body && !c.body->empty()) iov[n_iov++] = {const_cast<char*>(c.body->data()), c.body->size()};
      } else {
        size_t off = c.sent - c.head.size();
        iov[n_iov++] = {const_cast<char*>(c.body->data()) + off, c.body->size() - off};
      }
      msghdr msg{};
      msg.msg_iov = iov;
      msg.msg_iovlen = static_cast<size_t>(n_iov);
      ssize_t w = ::sendmsg(c.fd, &msg, MSG_NOSIGNAL);
      if (w < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
        Close(c.id, nullptr);
        return false;
      }
      c.sent += static_cast<size_t>(w);
    }
    // Response complete.
    c.head.clear();
    c.body.reset();
    c.sent = 0;
    if (c.close_after) {
      // Half-close and drain what the client still sends, so that closing does not
      // reset the connection before it has read the response.
      ::shutdown(c.fd, SHUT_WR);
      c.in.clear();
      Enter(c, ConnState::kClosing, now);
      return true;
    }
    Enter(c, ConnState::kIdle, now);
    if (!c.in.empty()) {  // a pipelined request
      Enter(c, ConnState::kReading, now);
      return TryParse(c, now);
    }
    return true;
  }

  void OnReadable(Conn& c, Clock::time_point now) {
    char buf[4096];
    for (;;) {
      if (c.state != ConnState::kClosing && c.in.size() >= options.max_request_bytes) break;
      ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n > 0) {
        if (c.state == ConnState::kClosing) continue;  // discarded
        if (c.state == ConnState::kIdle) Enter(c, ConnState::kReading, now);
        c.in.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n == 0 && c.state == ConnState::kReading && !c.in.empty()) {
        c.peer_eof = true;  // answer what it sent, then close
        break;
      }
      Close(c.id, nullptr);  // peer closed, or an error
      return;
    }
    if (c.state == ConnState::kReading) TryParse(c, now);
  }

  void Deliver(Clock::time_point now) {
    std::vector<Done> ready;
    {
      std::lock_guard lock(done_mu);
      ready.swap(done);
    }
    for (auto& d : ready) {
      auto it = conns.find(d.conn);
      if (it == conns.end() || it->second.state != ConnState::kPending) continue;  // gone meanwhile
      Conn& c = it->second;
      c.head = std::string("HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n") +
               (d.gzip ? "Content-Encoding: gzip\r\n" : "") + "Content-Length: " + std::to_string(d.body->size()) +
               "\r\n" + (c.close_after ? "Connection: close\r\n" : c.keep_alive_header ? "Connection: keep-alive\r\n" : "") +
               "\r\n";
      c.body = std::move(d.body);
      c.sent = 0;
      Enter(c, ConnState::kWriting, now);
      Flush(c, now);
    }
    EnforceUnsentBudget();
  }

  void EnforceUnsentBudget() {
    for (;;) {
      size_t unsent = 0;
      size_t writers = 0;
      const Conn* oldest = nullptr;
      for (const auto& [id, c] : conns) {
        if (c.state != ConnState::kWriting) continue;
        ++writers;
        unsent += c.head.size() + (c.body ? c.body->size() : 0) - c.sent;
        if (oldest == nullptr || c.since < oldest->since) oldest = &c;
      }
      if (unsent <= options.max_unsent_bytes || writers <= 1) return;
      Close(oldest->id, "evicted");
    }
  }

  void ExpireDeadlines(Clock::time_point now) {
    std::vector<std::pair<uint64_t, ConnState>> expired;
    for (const auto& [id, c] : conns) {
      if (c.deadline <= now) expired.emplace_back(id, c.state);
    }
    for (auto [id, state] : expired) {
      switch (state) {
        case ConnState::kReading: {
          static constexpr std::string_view k408 =
              "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
          ssize_t n = ::send(conns[id].fd, k408.data(), k408.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
          (void)n;
          Close(id, "request_timeout");
          break;
        }
        case ConnState::kIdle: Close(id, "idle_timeout"); break;
        case ConnState::kWriting: Close(id, "write_timeout"); break;
        case ConnState::kClosing: Close(id, nullptr); break;
        case ConnState::kPending: break;
      }
    }
  }

  void IoLoop() {
    std::vector<pollfd> fds;
    std::vector<uint64_t> ids;
    while (!stopping) {
      auto now = Clock::now();
      ExpireDeadlines(now);
      fds.clear();
      ids.clear();
      fds.push_back({wake_fd, POLLIN, 0});
      bool accepting = now >= accept_paused_until;
      fds.push_back({accepting ? listen_fd : -1, POLLIN, 0});
      auto next = now + std::chrono::milliseconds(1000);
      if (!accepting) next = std::min(next, accept_paused_until);
      for (const auto& [id, c] : conns) {
        short ev = 0;
        switch (c.state) {
          case ConnState::kReading:
          case ConnState::kIdle:
            ev = c.in.size() < options.max_request_bytes && !c.peer_eof ? POLLIN : 0;
            break;
          case ConnState::kClosing: ev = POLLIN; break;
          case ConnState::kWriting: ev = POLLOUT; break;
          case ConnState::kPending: ev = 0; break;  // POLLHUP/POLLERR still reported
        }
        fds.push_back({c.fd, ev, 0});
        ids.push_back(id);
        next = std::min(next, c.deadline);
      }
      auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1;
      int rc = ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<long long>(wait_ms, 0, 1000)));
      if (rc < 0 && errno != EINTR) break;
      now = Clock::now();
      if (fds[0].revents & POLLIN) {
        uint64_t v;
        ssize_t n = ::read(wake_fd, &v, sizeof v);
        (void)n;
        if (stopping) break;
        Deliver(now);
      }
      if (fds[1].revents & POLLIN) AcceptNew(now);
      for (size_t i = 0; i < ids.size(); ++i) {
        short re = fds[i + 2].revents;
        if (re == 0) continue;
        auto it = conns.find(ids[i]);
        if (it == conns.end() || it->second.fd != fds[i + 2].fd) continue;  // closed (evicted) meanwhile
        Conn& c = it->second;
        if (re & POLLNVAL) {
          Close(c.id, nullptr);
          continue;
        }
        switch (c.state) {
          case ConnState::kReading:
          case ConnState::kIdle:
          case ConnState::kClosing:
            OnReadable(c, now);
            break;
          case ConnState::kWriting:
            if (re & (POLLERR | POLLHUP)) Close(c.id, nullptr);
            else Flush(c, now);
            break;
          case ConnState::kPending:
            if (re & (POLLERR | POLLHUP)) Close(c.id, nullptr);
            break;
        }
      }
    }
    for (auto& [id, c] : conns) ::close(c.fd);
    conns.clear();
  }
};

HttpServer::HttpServer(HttpServerOptions options, CollectFn collect)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(collect))) {}

HttpServer::~HttpServer() { Stop(); }

uint16_t HttpServer::port() const { return impl_->port; }

bool HttpServer::Start(std::string* error) {
  Impl& s = *impl_;
  auto addr = ParseListenAddress(s.options.listen, error);
  if (!addr) return false;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  int gai = ::getaddrinfo(addr->host.c_str(), std::to_string(addr->port).c_str(), &hints, &res);
  if (gai != 0) {
    *error = "cannot resolve '" + addr->host + "': " + gai_strerror(gai);
    return false;
  }
  std::string last = "no address";
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last = std::strerror(errno);
      continue;
    }
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      last = std::strerror(errno);
      ::close(fd);
      continue;
    }
    s.listen_fd = fd;
    break;
  }
  ::freeaddrinfo(res);
  if (s.listen_fd < 0) {
    *error = last;
    return false;
  }
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(s.listen_fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
    s.port = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  }
  s.wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (s.wake_fd < 0) {
    *error = std::string("eventfd: ") + std::strerror(errno);
    ::close(s.listen_fd);
    s.listen_fd = -1;
    return false;
  }
  for (int i = 0; i < std::max(1, s.options.workers); ++i) s.workers.emplace_back([&s] { s.WorkerLoop(); });
  s.io = std::thread([&s] { s.IoLoop(); });
  return true;
}

void HttpServer::Stop() {
  Impl& s = *impl_;
  if (s.stopping.exchange(true)) return;
  if (s.wake_fd >= 0) s.Wake();
  if (s.io.joinable()) s.io.join();
  {
    std::lock_guard lock(s.jobs_mu);
  }
  s.jobs_cv.notify_all();
  for (auto& w : s.workers) {
    if (w.joinable()) w.join();
  }
  if (s.listen_fd >= 0) ::close(s.listen_fd);
  if (s.wake_fd >= 0) ::close(s.wake_fd);
  s.listen_fd = s.wake_fd = -1;
}

}  // namespace mt::exporter
