// The /metrics HTTP server: request parsing, the eviction rule, and a live server on a
// loopback port with short deadlines (idle and dribbling clients, oversized heads,
// keep-alive, HTTP/1.0, pipelining, gzip, the connection limit).
#include "exporter/http_server.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <thread>

namespace mt::exporter {
namespace {

using namespace std::chrono_literals;

TEST(ParseListenAddress, AcceptsHostPortAndBracketedIpv6) {
  std::string err;
  auto a = ParseListenAddress("127.0.0.1:9400", &err);
  ASSERT_TRUE(a) << err;
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9400);
  a = ParseListenAddress("[::1]:0", &err);
  ASSERT_TRUE(a) << err;
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 0);
  a = ParseListenAddress("node1:65535", &err);
  ASSERT_TRUE(a) << err;
  EXPECT_EQ(a->host, "node1");
}

TEST(ParseListenAddress, RejectsAmbiguousOrBrokenAddresses) {
  std::string err;
  EXPECT_FALSE(ParseListenAddress("9400", &err));
  EXPECT_NE(err.find("HOST:PORT"), std::string::npos);
  EXPECT_FALSE(ParseListenAddress(":9400", &err));
  EXPECT_NE(err.find("0.0.0.0:PORT"), std::string::npos);
  EXPECT_FALSE(ParseListenAddress("::1:9400", &err));
  EXPECT_NE(err.find("brackets"), std::string::npos);
  EXPECT_FALSE(ParseListenAddress("127.0.0.1:65536", &err));
  EXPECT_FALSE(ParseListenAddress("127.0.0.1:", &err));
  EXPECT_FALSE(ParseListenAddress("127.0.0.1:9x", &err));
  EXPECT_FALSE(ParseListenAddress("[::1]9400", &err));
}

TEST(ParseRequestHead, CompleteIncompleteAndBad) {
  HttpRequestHead h;
  size_t n = 0;
  std::string err;
  EXPECT_EQ(ParseRequestHead("GET /metrics HTTP/1.1\r\nHost: x\r\n", &h, &n, &err), HeadParse::kIncomplete);
  std::string req = "GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\nAccept-Encoding: deflate, gzip\r\n\r\nGET";
  ASSERT_EQ(ParseRequestHead(req, &h, &n, &err), HeadParse::kComplete);
  EXPECT_EQ(n, req.size() - 3);
  EXPECT_EQ(h.method, "GET");
  EXPECT_EQ(h.target, "/metrics?x=1");
  EXPECT_TRUE(h.keep_alive);
  EXPECT_TRUE(h.accepts_gzip);
  EXPECT_FALSE(h.has_body);
  // Leading blank lines and bare LF are tolerated.
  ASSERT_EQ(ParseRequestHead("\r\nGET / HTTP/1.0\n\n", &h, &n, &err), HeadParse::kComplete);
  EXPECT_EQ(n, 18u);
  EXPECT_TRUE(h.http10);
  EXPECT_FALSE(h.keep_alive);
  EXPECT_EQ(ParseRequestHead("GET / HTTP/2.0\r\n\r\n", &h, &n, &err), HeadParse::kBad);
  EXPECT_EQ(ParseRequestHead("GET /\r\n\r\n", &h, &n, &err), HeadParse::kBad);
  EXPECT_EQ(ParseRequestHead("GET / HTTP/1.1\r\n folded\r\n\r\n", &h, &n, &err), HeadParse::kBad);
  EXPECT_EQ(ParseRequestHead("GET / HTTP/1.1\r\nno colon\r\n\r\n", &h, &n, &err), HeadParse::kBad);
  EXPECT_EQ(ParseRequestHead("G(T / HTTP/1.1\r\n\r\n", &h, &n, &err), HeadParse::kBad);
}

TEST(ParseRequestHead, ConnectionAndBodyHeaders) {
  HttpRequestHead h;
  size_t n = 0;
  std::string err;
  ASSERT_EQ(ParseRequestHead("GET / HTTP/1.1\r\nconnection: Close\r\n\r\n", &h, &n, &err), HeadParse::kComplete);
  EXPECT_FALSE(h.keep_alive);
  ASSERT_EQ(ParseRequestHead("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &h, &n, &err), HeadParse::kComplete);
  EXPECT_TRUE(h.keep_alive);
  ASSERT_EQ(ParseRequestHead("GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &h, &n, &err), HeadParse::kComplete);
  EXPECT_FALSE(h.has_body);
  ASSERT_EQ(ParseRequestHead("GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\n", &h, &n, &err), HeadParse::kComplete);
  EXPECT_TRUE(h.has_body);
  ASSERT_EQ(ParseRequestHead("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &h, &n, &err), HeadParse::kComplete);
  EXPECT_TRUE(h.has_body);
}

TEST(AcceptsGzip, HonoursQZero) {
  EXPECT_TRUE(AcceptsGzip("gzip"));
  EXPECT_TRUE(AcceptsGzip("br, GZIP;q=0.5"));
  EXPECT_TRUE(AcceptsGzip("x-gzip"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip; q=0.000"));
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip(""));
}

TEST(ChooseEvictionVictim, OldestIdleOrReadingFirstThenWritingThenPending) {
  auto t = std::chrono::steady_clock::now();
  std::vector<ConnAge> c = {{1, ConnState::kPending, t - 10s},
                            {2, ConnState::kWriting, t - 9s},
                            {3, ConnState::kReading, t - 1s},
                            {4, ConnState::kIdle, t - 2s}};
  EXPECT_EQ(ChooseEvictionVictim(c), 4);
  c.pop_back();
  EXPECT_EQ(ChooseEvictionVictim(c), 3);
  c.pop_back();
  EXPECT_EQ(ChooseEvictionVictim(c), 2);
  c.pop_back();
  EXPECT_EQ(ChooseEvictionVictim(c), 1);
  c.pop_back();
  EXPECT_EQ(ChooseEvictionVictim(c), -1);
}

std::string Gunzip(const std::string& z) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, MAX_WBITS + 16), Z_OK);
  std::string out(1 << 20, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(z.data()));
  zs.avail_in = static_cast<uInt>(z.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  inflateEnd(&zs);
  return out;
}

TEST(GzipCompress, RoundTrips) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "hw_x{i=\"" + std::to_string(i) + "\"} 1\n";
  std::string z = GzipCompress(text);
  ASSERT_FALSE(z.empty());
  EXPECT_LT(z.size(), text.size());
  EXPECT_EQ(Gunzip(z), text);
}

// ---- live server -------------------------------------------------------------------------

std::vector<prometheus::MetricFamily> OneGauge(std::atomic<int>* calls) {
  ++*calls;
  prometheus::MetricFamily f{"hw_test_gauge", "a test gauge", prometheus::MetricType::Gauge, {}};
  prometheus::ClientMetric m;
  m.gauge.value = 42;
  f.metric.push_back(m);
  return {f};
}

struct Server {
  std::atomic<int> calls{0};
  std::unique_ptr<HttpServer> server;
  explicit Server(HttpServerOptions o = {}) {
    o.listen = "127.0.0.1:0";
    server = std::make_unique<HttpServer>(o, [this] { return OneGauge(&calls); });
    std::string err;
    EXPECT_TRUE(server->Start(&err)) << err;
  }
  int Connect() const {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(server->port());
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    return fd;
  }
};

void Send(int fd, std::string_view s) { ASSERT_EQ(::send(fd, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size())); }

// Reads until `stop` appears (or the peer closes, or `timeout`); returns what came.
std::string ReadUntil(int fd, std::string_view stop, std::chrono::milliseconds timeout = 5s, bool* closed = nullptr) {
  std::string got;
  auto end = std::chrono::steady_clock::now() + timeout;
  if (closed != nullptr) *closed = false;
  while (std::chrono::steady_clock::now() < end) {
    if (!stop.empty() && got.find(stop) != std::string::npos) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    char buf[65536];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      if (closed != nullptr) *closed = true;
      break;
    }
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

// One full response on a kept-alive connection: head + Content-Length bytes.
std::string ReadResponse(int fd) {
  std::string got = ReadUntil(fd, "\r\n\r\n");
  size_t head_end = got.find("\r\n\r\n");
  if (head_end == std::string::npos) return got;
  size_t cl = got.find("Content-Length: ");
  size_t len = cl == std::string::npos ? 0 : std::stoul(got.substr(cl + 16));
  while (got.size() < head_end + 4 + len) {
    std::string more = ReadUntil(fd, "", 200ms);
    if (more.empty()) break;
    got += more;
  }
  return got;
}

TEST(HttpServer, ServesMetricsWithKeepAliveAndExposerMetrics) {
  Server s;
  int fd = s.Connect();
  Send(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  std::string r1 = ReadResponse(fd);
  EXPECT_EQ(r1.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r1;
  EXPECT_NE(r1.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), std::string::npos);
  EXPECT_NE(r1.find("\nhw_test_gauge 42\n"), std::string::npos);
  EXPECT_EQ(r1.find("Connection: close"), std::string::npos);
  Send(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");  // same connection
  std::string r2 = ReadResponse(fd);
  EXPECT_NE(r2.find("\nexposer_scrapes_total 1\n"), std::string::npos) << r2;
  EXPECT_NE(r2.find("mt_exporter_http_connections 1\n"), std::string::npos);
  ::close(fd);
  EXPECT_EQ(s.calls.load(), 2);
}

TEST(HttpServer, GzipWhenAsked) {
  Server s;
  int fd = s.Connect();
  Send(fd, "GET /metrics HTTP/1.1\r\nAccept-Encoding: gzip\r\n\r\n");
  std::string r = ReadResponse(fd);
  ASSERT_NE(r.find("Content-Encoding: gzip\r\n"), std::string::npos) << r;
  std::string body = r.substr(r.find("\r\n\r\n") + 4);
  EXPECT_NE(Gunzip(body).find("hw_test_gauge 42\n"), std::string::npos);
  ::close(fd);
}

TEST(HttpServer, Http10ClosesAfterTheResponse) {
  Server s;
  int fd = s.Connect();
  Send(fd, "GET /metrics HTTP/1.0\r\n\r\n");
  bool closed = false;
  std::string r = ReadUntil(fd, "", 5s, &closed);
  EXPECT_TRUE(closed);
  EXPECT_NE(r.find("Connection: close\r\n"), std::string::npos);
  EXPECT_NE(r.find("hw_test_gauge 42\n"), std::string::npos);
  ::close(fd);
}

TEST(HttpServer, ErrorsAreSpecificAndClose) {
  Server s;
  struct Case {
    std::string request;
    std::string status;
  };
  for (const Case& c : std::vector<Case>{{"GET / HTTP/1.1\r\n\r\n", "404"},
                                         {"POST /metrics HTTP/1.1\r\n\r\n", "405"},
                                         {"HEAD /metrics HTTP/1.1\r\n\r\n", "405"},
                                         {"GARBAGE\r\n\r\n", "400"},
                                         {"GET /metrics HTTP/3\r\n\r\n", "400"}}) {
    int fd = s.Connect();
    Send(fd, c.request);
    bool closed = false;
    std::string r = ReadUntil(fd, "", 5s, &closed);
    EXPECT_EQ(r.rfind("HTTP/1.1 " + c.status + " ", 0), 0u) << c.request << " -> " << r;
    EXPECT_TRUE(closed) << c.request;
    ::close(fd);
  }
  EXPECT_EQ(s.calls.load(), 0);
}

TEST(HttpServer, OversizedHeadGets431) {
  HttpServerOptions o;
  o.max_request_bytes = 1024;
  Server s(o);
  int fd = s.Connect();
  Send(fd, "GET /metrics HTTP/1.1\r\nX-Fill: " + std::string(2000, 'a'));
  bool closed = false;
  std::string r = ReadUntil(fd, "", 5s, &closed);
  EXPECT_EQ(r.rfind("HTTP/1.1 431 ", 0), 0u) << r;
  EXPECT_TRUE(closed);
  ::close(fd);
}

TEST(HttpServer, PipelinedRequestsAreAnsweredInOrder) {
  Server s;
  int fd = s.Connect();
  Send(fd, "GET /metrics HTTP/1.1\r\n\r\nGET /nope HTTP/1.1\r\n\r\n");
  bool closed = false;
  std::string r = ReadUntil(fd, "", 5s, &closed);  // the 404 closes the connection
  EXPECT_TRUE(closed);
  EXPECT_EQ(r.rfind("HTTP/1.1 200 ", 0), 0u) << r;
  size_t second = r.find("HTTP/1.1 404 ");
  ASSERT_NE(second, std::string::npos) << r;
  EXPECT_GT(second, r.find("hw_test_gauge 42\n"));
  ::close(fd);
}

TEST(HttpServer, RequestAnsweredWhenClientHalfClosesAfterSending) {
  Server s;
  int fd = s.Connect();
  Send(fd, "GET /metrics HTTP/1.1\r\n\r\n");
  ::shutdown(fd, SHUT_WR);
  bool closed = false;
  std::string r = ReadUntil(fd, "", 5s, &closed);
  EXPECT_NE(r.find("hw_test_gauge 42\n"), std::string::npos) << r;
  EXPECT_TRUE(closed);
  ::close(fd);
}

TEST(HttpServer, IdleAndDribblingClientsDoNotBlockScrapesAndAreCutOff) {
  HttpServerOptions o;
  o.request_timeout = 600ms;
  o.idle_timeout = 600ms;
  Server s(o);
  std::vector<int> idle;
  for (int i = 0; i < 32; ++i) idle.push_back(s.Connect());
  int dribbler = s.Connect();
  Send(dribbler, "GET /met");
  // A scrape on a new connection is answered at once.
  int fd = s.Connect();
  Send(fd, "GET /metrics HTTP/1.1\r\n\r\n");
  auto t0 = std::chrono::steady_clock::now();
  std::string r = ReadResponse(fd);
  EXPECT_NE(r.find("hw_test_gauge 42\n"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);  // generous: it takes milliseconds
  // The dribbler is cut off with 408 at its deadline; the idle ones are closed too; the
  // kept-alive scrape connection is closed after idle_timeout.
  Send(dribbler, "ri");
  bool closed = false;
  std::string d = ReadUntil(dribbler, "", 10s, &closed);
  EXPECT_TRUE(closed);
  EXPECT_EQ(d.rfind("HTTP/1.1 408 ", 0), 0u) << d;
  for (int i : idle) {
    ReadUntil(i, "", 10s, &closed);
    EXPECT_TRUE(closed);
    ::close(i);
  }
  ReadUntil(fd, "", 10s, &closed);
  EXPECT_TRUE(closed);
  ::close(fd);
  ::close(dribbler);
}

TEST(HttpServer, AtTheConnectionLimitTheOldestIdleConnectionIsEvicted) {
  HttpServerOptions o;
  o.max_connections = 8;
  Server s(o);
  std::vector<int> idle;
  for (int i = 0; i < 8; ++i) {
    idle.push_back(s.Connect());
    std::this_thread::sleep_for(5ms);  // distinct ages
  }
  int fd = s.Connect();
  Send(fd, "GET /metrics HTTP/1.1\r\n\r\n");
  std::string r = ReadResponse(fd);
  EXPECT_NE(r.find("hw_test_gauge 42\n"), std::string::npos);
  bool closed = false;
  ReadUntil(idle[0], "", 5s, &closed);
  EXPECT_TRUE(closed) << "the oldest idle connection should have been evicted";
  ReadUntil(idle[7], "", 200ms, &closed);
  EXPECT_FALSE(closed) << "the newest idle connection should still be open";
  for (int i : idle) ::close(i);
  Send(fd, "GET /metrics HTTP/1.1\r\n\r\n");
  r = ReadResponse(fd);
  EXPECT_NE(r.find("mt_exporter_http_connections_closed_total{reason=\"evicted\"} 1\n"), std::string::npos) << r;
  ::close(fd);
}

TEST(HttpServer, ConcurrentScrapesShareACollection) {
  Server s;
  std::vector<int> fds;
  for (int i = 0; i < 20; ++i) fds.push_back(s.Connect());
  for (int fd : fds) Send(fd, "GET /metrics HTTP/1.1\r\n\r\n");
  for (int fd : fds) {
    EXPECT_NE(ReadResponse(fd).find("hw_test_gauge 42\n"), std::string::npos);
    ::close(fd);
  }
  EXPECT_GE(s.calls.load(), 1);
  EXPECT_LE(s.calls.load(), 20);
}

TEST(HttpServer, CannotListenTwiceOnOnePort) {
  Server a;
  HttpServerOptions o;
  o.listen = "127.0.0.1:" + std::to_string(a.server->port());
  HttpServer b(o, [] { return std::vector<prometheus::MetricFamily>{}; });
  std::string err;
  EXPECT_FALSE(b.Start(&err));
  EXPECT_FALSE(err.empty());
}

}  // namespace
}  // namespace mt::exporter
