// The TSDB connection manager and the Prometheus client against a real Prometheus
// (Debian `prometheus`) on a real promtool-made TSDB: private copy (the job's directory
// untouched), reuse, restart after a kill, idle stop, stop at destruction, live servers
// used in place, and each failure with its specific error.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <thread>

#include "tests/unit/tools/query_tsdb/tsdb_fixture.h"
#include "tools/tsdb/prometheus_client.h"
#include "tools/tsdb/tsdb_blocks.h"
#include "tools/tsdb/tsdb_manager.h"
#include "tools/tsdb/tsdb_series.h"

namespace mt::tools {
namespace {
namespace fs = std::filesystem;
using testing::kEnd;
using testing::kStart;

// path → size and mtime of everything under `dir`.
std::map<std::string, std::pair<uintmax_t, long>> Snapshot(const fs::path& dir) {
  std::map<std::string, std::pair<uintmax_t, long>> out;
  for (auto& e : fs::recursive_directory_iterator(dir)) {
    long mt = static_cast<long>(fs::last_write_time(e.path()).time_since_epoch().count());
    out[e.path().string()] = {e.is_regular_file() ? e.file_size() : 0, mt};
  }
  return out;
}

bool ProcessGone(pid_t pid) { return ::kill(pid, 0) != 0; }

class TsdbManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::TempDir("mgr");
    tsdb_ = root_ / "job" / "prometheus";
    ASSERT_EQ(testing::MakeTsdb(tsdb_), "");
    opts_.port_first = testing::TestPortBase();
    // Ports base..base+9 for the managers; base+10.. for servers the tests start themselves,
    // so that tests running in parallel (ctest -j) never answer for each other.
    opts_.port_last = opts_.port_first + 9;
    opts_.temp_root = root_;
    opts_.idle_timeout = std::chrono::minutes(5);
  }
  void TearDown() override {
    for (pid_t p : started_) {
      ::kill(p, SIGTERM);
      ::waitpid(p, nullptr, 0);
    }
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  fs::path root_, tsdb_;
  TsdbManagerOptions opts_;
  std::vector<pid_t> started_;
};

TEST_F(TsdbManagerTest, BlocksGiveTheTimeRange) {
  TsdbLayout l = ReadTsdbLayout(tsdb_);
  ASSERT_GE(l.blocks.size(), 2u);   // 3 h cut at 2 h-aligned boundaries
  EXPECT_EQ(l.min_ms, kStart * 1000);
  EXPECT_EQ(l.max_ms, kEnd * 1000 + 1);   // maxTime is exclusive
  EXPECT_FALSE(l.has_wal);
}

TEST_F(TsdbManagerTest, MissingEmptyAndCorruptTsdbsHaveSpecificErrors) {
  try {
    ReadTsdbLayout(root_ / "nope");
    FAIL();
  } catch (const TsdbError& e) {
    EXPECT_EQ(e.code(), TsdbError::Code::kMissing);
  }
  fs::create_directories(root_ / "empty" / "wal");
  try {
    ReadTsdbLayout(root_ / "empty");
    FAIL();
  } catch (const TsdbError& e) {
    EXPECT_EQ(e.code(), TsdbError::Code::kEmpty);
    EXPECT_NE(std::string(e.what()).find("[Prometheus]"), std::string::npos);
  }
  fs::create_directories(root_ / "bad" / "01HZZZZZZZZZZZZZZZZZZZZZZZ");
  std::ofstream(root_ / "bad" / "01HZZZZZZZZZZZZZZZZZZZZZZZ" / "meta.json") << "{not json";
  try {
    ReadTsdbLayout(root_ / "bad");
    FAIL();
  } catch (const TsdbError& e) {
    EXPECT_EQ(e.code(), TsdbError::Code::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("01HZZZZZZZZZZZZZZZZZZZZZZZ"), std::string::npos);
  }
}

TEST_F(TsdbManagerTest, PrivateCopyIsReusedRestartedAfterAKillAndStopped) {
  auto before = Snapshot(tsdb_.parent_path());
  pid_t first = 0;
  {
    TsdbManager m(opts_);
    {
      TsdbLease a = m.Acquire({tsdb_, false, std::nullopt});
      EXPECT_TRUE(a.started());
      EXPECT_EQ(a.source(), "private copy");
      first = a.pid();
      ASSERT_GT(first, 0);
      PrometheusClient c(a.url());
      // An instant query on historical data needs its explicit time.
      auto v = ParseQueryData(c.Query("hw_gpu_power_watts{host=\"b\",gpu=\"1\"}", kEnd - 60));
      ASSERT_EQ(v.size(), 1u);
      EXPECT_DOUBLE_EQ(v[0].points.at(0).v, 300);
      // Counters through rate(): host b grows 2/s.
      auto r = ParseQueryData(c.Query("rate(hw_tcp_retransmits_total{host=\"b\"}[5m])", kEnd - 60));
      ASSERT_EQ(r.size(), 1u);
      EXPECT_NEAR(r[0].points.at(0).v, 2.0, 1e-6);
    }
    {
      TsdbLease b = m.Acquire({tsdb_, false, std::nullopt});
      EXPECT_FALSE(b.started());
      EXPECT_EQ(b.pid(), first);
    }
    // Killed behind our back: the next call starts a fresh one that answers.
    ASSERT_EQ(::kill(first, SIGKILL), 0);
    for (int i = 0; i < 100 && ::kill(first, 0) == 0; ++i) {
      // still a zombie until the manager reaps it; Acquire does
      if (::waitpid(first, nullptr, WNOHANG) != 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    TsdbLease c = m.Acquire({tsdb_, false, std::nullopt});
    EXPECT_TRUE(c.started());
    EXPECT_NE(c.pid(), first);
    EXPECT_FALSE(PrometheusClient(c.url()).Query("up", kEnd).is_null());
    started_.push_back(c.pid());
  }
  // Destroying the manager stopped it; the job's own directory never changed.
  EXPECT_TRUE(ProcessGone(started_.back()));
  started_.clear();
  EXPECT_EQ(Snapshot(tsdb_.parent_path()), before);
}

TEST_F(TsdbManagerTest, IdleInstancesAreStopped) {
  opts_.idle_timeout = std::chrono::milliseconds(200);
  TsdbManager m(opts_);
  pid_t pid = 0;
  {
    TsdbLease a = m.Acquire({tsdb_, false, std::nullopt});
    pid = a.pid();
  }
  // Poll (no timing assertion): the reaper stops it once it has been idle long enough.
  for (int i = 0; i < 300 && m.running() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(m.running(), 0u);
  EXPECT_TRUE(ProcessGone(pid));
}

TEST_F(TsdbManagerTest, CopiesLeftByADeadMtAreSweptAndLiveOnesKept) {
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  fs::create_directories(root_ / "mt-tsdb-stale1" / "data");
  std::ofstream(root_ / "mt-tsdb-stale1" / "owner") << dead << " " << dead << "\n";
  fs::create_directories(root_ / "mt-tsdb-mine01" / "data");
  std::ofstream(root_ / "mt-tsdb-mine01" / "owner") << ::getpid() << " " << dead << "\n";
  fs::create_directories(root_ / "mt-tsdb-noown1");   // being set up: no owner file yet
  TsdbManager m(opts_);
  EXPECT_FALSE(fs::exists(root_ / "mt-tsdb-stale1"));
  EXPECT_TRUE(fs::exists(root_ / "mt-tsdb-mine01"));
  EXPECT_TRUE(fs::exists(root_ / "mt-tsdb-noown1"));
}

TEST_F(TsdbManagerTest, NoBinaryNoPortAndCorruptBlocksAreClearErrors) {
  {
    TsdbManagerOptions o = opts_;
    o.prometheus_binary = (root_ / "no-such-prometheus").string();
    TsdbManager m(o);
    try {
      m.Acquire({tsdb_, false, std::nullopt});
      FAIL();
    } catch (const TsdbError& e) {
      EXPECT_EQ(e.code(), TsdbError::Code::kNoBinary);
      EXPECT_NE(std::string(e.what()).find("no-such-prometheus"), std::string::npos);
    }
  }
  {
    // A one-port range whose port is taken.
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int port = testing::TestPortBase() + 14;
    a.sin_port = htons(static_cast<uint16_t>(port));
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(fd, 1), 0);
    TsdbManagerOptions o = opts_;
    o.port_first = o.port_last = port;
    TsdbManager m(o);
    try {
      m.Acquire({tsdb_, false, std::nullopt});
      FAIL();
    } catch (const TsdbError& e) {
      EXPECT_EQ(e.code(), TsdbError::Code::kNoPort);
    }
    ::close(fd);
  }
  {
    // Valid meta.json, garbage index: Prometheus refuses to open it; we say so, and nothing is left running.
    fs::path bad = root_ / "corrupt" / "prometheus";
    fs::create_directories(bad);
    TsdbLayout l = ReadTsdbLayout(tsdb_);
    fs::copy(tsdb_ / l.blocks[0].ulid, bad / l.blocks[0].ulid, fs::copy_options::recursive);
    std::ofstream(bad / l.blocks[0].ulid / "index", std::ios::trunc) << "garbage";
    TsdbManager m(opts_);
    try {
      m.Acquire({bad, false, std::nullopt});
      FAIL();
    } catch (const TsdbError& e) {
      EXPECT_EQ(e.code(), TsdbError::Code::kStartFailed) << e.what();
    }
    EXPECT_EQ(m.running(), 0u);
  }
}

TEST_F(TsdbManagerTest, LiveJobsUseTheirOwnPrometheusAndNeverStartASecondOne) {
  // "The job's" Prometheus, started here on the TSDB directory itself, like a live job's.
  fs::path live = root_ / "live" / "prometheus";
  fs::create_directories(live);
  for (auto& e : fs::directory_iterator(tsdb_)) fs::copy(e.path(), live / e.path().filename(), fs::copy_options::recursive);
  std::ofstream(root_ / "live.yml") << "global:\n  scrape_interval: 999h\nscrape_configs: []\n";
  int port = testing::TestPortBase() + 15;
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::string cfg = "--config.file=" + (root_ / "live.yml").string(), path = "--storage.tsdb.path=" + live.string(),
                listen = "--web.listen-address=127.0.0.1:" + std::to_string(port);
    ::freopen("/dev/null", "w", stderr);
    ::execlp("prometheus", "prometheus", cfg.c_str(), path.c_str(), listen.c_str(), "--storage.tsdb.retention.time=100y",
             static_cast<char*>(nullptr));
    ::_exit(127);
  }
  started_.push_back(pid);
  PrometheusClient probe("http://127.0.0.1:" + std::to_string(port));
  for (int i = 0; i < 500 && !probe.Ready(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(probe.Ready());

  TsdbManagerOptions o = opts_;
  o.port_first = testing::TestPortBase() + 16;
  o.port_last = testing::TestPortBase() + 19;
  TsdbManager m(o);
  TsdbLease l = m.Acquire({live, true, port});
  EXPECT_EQ(l.source(), "live");
  EXPECT_EQ(l.pid(), 0);
  EXPECT_EQ(m.running(), 0u);

  // The same port for another job's directory: not ours, so a private copy of the blocks.
  TsdbLease other = m.Acquire({tsdb_, true, port});
  EXPECT_EQ(other.source(), "private copy");
  EXPECT_NE(other.note().find("another TSDB"), std::string::npos) << other.note();
  EXPECT_EQ(m.running(), 1u);
}

TEST_F(TsdbManagerTest, ClientErrorsArePrometheusMessagesTimeoutsAndCaps) {
  TsdbManager m(opts_);
  TsdbLease a = m.Acquire({tsdb_, false, std::nullopt});
  try {
    PrometheusClient(a.url()).Query("sum(rate(hw_tcp_retransmits_total[5m]) by", kEnd);
    FAIL();
  } catch (const PrometheusError& e) {
    EXPECT_EQ(e.kind(), PrometheusError::Kind::kBadData);
    EXPECT_NE(std::string(e.what()).find("parse error"), std::string::npos) << e.what();
  }
  PrometheusClientOptions small;
  small.max_response_bytes = 512;
  try {
    PrometheusClient(a.url(), small).QueryRange("hw_gpu_power_watts", kStart, kEnd, 15);
    FAIL();
  } catch (const PrometheusError& e) {
    EXPECT_EQ(e.kind(), PrometheusError::Kind::kTooLarge);
  }
  // Nothing listens: retried with backoff, then a connection error that says so.
  PrometheusClientOptions quick;
  quick.retries = 2;
  quick.backoff = std::chrono::milliseconds(10);
  try {
    PrometheusClient("http://127.0.0.1:1", quick).Labels();
    FAIL();
  } catch (const PrometheusError& e) {
    EXPECT_EQ(e.kind(), PrometheusError::Kind::kConnection);
    EXPECT_NE(std::string(e.what()).find("after 3 attempts"), std::string::npos) << e.what();
  }
  PrometheusClient c(a.url());
  auto values = c.LabelValues("host");
  EXPECT_EQ(values, Json::array({"a", "b"}));
  EXPECT_THROW(c.LabelValues("../x"), PrometheusError);
  EXPECT_TRUE(c.Series({"hw_gpu_power_watts"}, kStart, kEnd).size() == 4u);
  EXPECT_TRUE(c.TsdbStatus().is_object());
  EXPECT_GT(c.bytes_received(), 0u);
}

}  // namespace
}  // namespace mt::tools
