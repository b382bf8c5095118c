// Contract tests with real bash plugins (the *_metrics_plugin.sh contract of the
// original metrics_exporter.sh).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <thread>

#include "exporter/log.h"

#include "exporter/plugin_runner.h"
#include "tests/unit/exporter/temp_dir.h"
#include "tests/unit/exporter/test_util.h"

namespace mt::exporter {
namespace {

using testing::Index;
using testing::TempDir;

struct Runner {
  TempDir dir;
  std::unique_ptr<PluginRunner> runner;

  explicit Runner(std::chrono::milliseconds interval = std::chrono::milliseconds(5000),
                  std::function<void(PluginRunnerOptions&)> tweak = nullptr) {
    PluginRunnerOptions o;
    o.dirs = {dir.str() + "/plugins"};
    o.host = "node1";
    o.interval = interval;
    if (tweak) tweak(o);
    runner = std::make_unique<PluginRunner>(o);
  }
  void Plugin(const std::string& name, const std::string& body) {
    dir.Write("plugins/" + name + "_metrics_plugin.sh", "#!/bin/bash\n" + body);
  }
  PluginStatus Status(const std::string& name) {
    for (auto& s : runner->Snapshot()) {
      if (s.name == name) return s;
    }
    ADD_FAILURE() << "no plugin " << name;
    return {};
  }
  testing::Scrape Families(const std::string& name) { return Index(Status(name).families); }
  std::string Read(const std::string& rel) {
    std::ifstream f(dir.path() / rel);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  }
};

// A process is gone once kill(0) fails or it is a zombie nobody has reaped yet.
bool Gone(pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    if (::kill(pid, 0) != 0) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    size_t paren = line.rfind(')');
    if (paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z') return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(PluginRunner, RunsPluginWithHostArgumentAndParsesOutput) {
  Runner r;
  r.Plugin("host", R"(
echo "# HELP hw_demo_gauge demo"
echo "# TYPE hw_demo_gauge gauge"
echo "hw_demo_gauge{host=\"$1\"} 42"
echo "# TYPE hw_demo_total counter"
echo "hw_demo_total{host=\"$1\"} 7 1800000000000"
echo "state-was=[${_PLUGIN_STATE-unset}]" >&2
)");
  r.runner->PollOnce();
  auto s = r.Families("host");
  EXPECT_EQ(s.At(R"(hw_demo_gauge{host="node1"})"), 42);
  EXPECT_EQ(s.At(R"(hw_demo_total{host="node1"})"), 7);
  EXPECT_EQ(s.types.at("hw_demo_total"), prometheus::MetricType::Counter);
  EXPECT_EQ(s.families[1].metric[0].timestamp_ms, 1800000000000);
  auto st = r.Status("host");
  EXPECT_EQ(st.runs, 1u);
  EXPECT_EQ(st.last_exit, 0);
  EXPECT_EQ(st.invalid_lines, 0u);
}

TEST(PluginRunner, TimeoutKillsTheWholeProcessGroup) {
  Runner r(std::chrono::milliseconds(500));
  r.Plugin("slow", "echo $$ > " + r.dir.str() + "/pid\nsleep 30 &\necho $! > " + r.dir.str() +
                       "/child\necho 'hw_x 1'\nwait\n");
  r.runner->PollOnce();
  auto st = r.Status("slow");
  EXPECT_EQ(st.timeouts, 1u);
  EXPECT_EQ(st.last_exit, 124);
  EXPECT_TRUE(st.families.empty());  // output of a killed run is not served
  EXPECT_LT(st.last_seconds, 5.0);
  EXPECT_TRUE(Gone(std::stoi(r.Read("pid"))));
  EXPECT_TRUE(Gone(std::stoi(r.Read("child"))));
}

TEST(PluginRunner, ForkedChildThatNeverExitsDoesNotHoldTheRun) {
  Runner r(std::chrono::milliseconds(3000));
  // The child inherits stdout, so the pipe stays open after the plugin exits.
  r.Plugin("forker", "sleep 1000 &\necho $! > " + r.dir.str() + "/child\necho 'hw_forked 1'\nexit 0\n");
  r.runner->PollOnce();
  auto st = r.Status("forker");
  EXPECT_EQ(st.timeouts, 0u);
  EXPECT_EQ(st.last_exit, 0);
  EXPECT_EQ(Index(st.families).At("hw_forked{}"), 1);
  EXPECT_TRUE(Gone(std::stoi(r.Read("child"))));
}

TEST(PluginRunner, Exit99DisablesForLife) {
  Runner r;
  r.Plugin("gone", "echo run >> " + r.dir.str() + "/runs\necho 'hw_y 1'\nexit 99\n");
  r.runner->PollOnce();
  r.runner->PollOnce();
  r.runner->PollOnce();
  EXPECT_EQ(r.Read("runs"), "run\n");
  auto st = r.Status("gone");
  EXPECT_TRUE(st.disabled);
  EXPECT_TRUE(st.families.empty());
}

TEST(PluginRunner, StateRoundTripsThroughTheEnvironment) {
  Runner r;
  r.Plugin("stateful", R"SH(
n=${_PLUGIN_STATE:-0}
echo "hw_prev_state $n"
echo "# STATE $((n + 1))"
)SH");
  for (int i = 0; i < 3; ++i) r.runner->PollOnce();
  EXPECT_EQ(r.runner->StateOf("stateful"), "3");
  EXPECT_EQ(r.Families("stateful").At("hw_prev_state{}"), 2);
}

TEST(PluginRunner, StateOnlyPollReplaysCacheAndNoneClearsIt) {
  Runner r;
  // Run 1: metrics with an explicit timestamp. Runs 2-3: STATE only (replay). Run 4:
  // empty output (nothing served, cache kept). Run 5: STATE only (replay). Run 6:
  // __NONE__ (cache cleared). Run 7: STATE only (nothing left to replay).
  r.Plugin("tb", "c=$(cat " + r.dir.str() + "/c 2>/dev/null || echo 0); c=$((c + 1)); echo $c > " + r.dir.str() + "/c\n"
                 "case $c in\n"
                 "  1) echo 'tb_step{host=\"node1\"} 10 1800000000000'; echo \"# STATE s$c\" ;;\n"
                 "  4) ;;\n"
                 "  6) echo \"# STATE __NONE__|s$c\" ;;\n"
                 "  *) echo \"# STATE s$c\" ;;\n"
                 "esac\n");
  auto served = [&] { return r.Status("tb").families; };
  r.runner->PollOnce();  // 1
  ASSERT_EQ(served().size(), 1u);
  EXPECT_EQ(served()[0].metric[0].timestamp_ms, 1800000000000);
  r.runner->PollOnce();  // 2: replay
  ASSERT_EQ(served().size(), 1u);
  EXPECT_EQ(served()[0].metric[0].timestamp_ms, 1800000000000);
  EXPECT_EQ(r.runner->StateOf("tb"), "s2");
  r.runner->PollOnce();  // 3: replay
  EXPECT_EQ(served().size(), 1u);
  r.runner->PollOnce();  // 4: empty output
  EXPECT_TRUE(served().empty());
  r.runner->PollOnce();  // 5: replay again
  EXPECT_EQ(served().size(), 1u);
  r.runner->PollOnce();  // 6: __NONE__
  EXPECT_TRUE(served().empty());
  r.runner->PollOnce();  // 7: nothing cached any more
  EXPECT_TRUE(served().empty());
  EXPECT_EQ(r.runner->StateOf("tb"), "s7");
}

TEST(PluginRunner, GarbageLinesAreDroppedAndCounted) {
  Runner r;
  r.Plugin("messy", R"(
echo 'hw_good 1'
echo 'this is not a metric'
echo 'hw_bad{host="x" 2'
printf 'hw_bin \x01\x02\n'
echo 'hw_good 2'
echo '# TYPE hw_hist histogram'
echo 'hw_hist_bucket{le="1"} 3'
echo 'hw_also_good{a="b"} 3.5e1'
)");
  r.runner->PollOnce();
  r.runner->PollOnce();
  auto st = r.Status("messy");
  EXPECT_EQ(st.invalid_lines, 2u * 6u);  // garbage, bad label, binary, duplicate, histogram TYPE, its bucket
  auto s = Index(st.families);
  EXPECT_EQ(s.At("hw_good{}"), 1);
  EXPECT_EQ(s.At(R"(hw_also_good{a="b"})"), 35);
  EXPECT_EQ(s.samples.size(), 2u);
}

TEST(PluginRunner, CrashingPluginServesNothingAndReportsItsSignal) {
  Runner r;
  r.Plugin("crash", "kill -SEGV $$\n");
  r.runner->PollOnce();
  auto st = r.Status("crash");
  EXPECT_EQ(st.last_exit, 128 + SIGSEGV);
  EXPECT_TRUE(st.families.empty());
}

TEST(PluginRunner, DiscoversPluginsOnEveryPoll) {
  Runner r;
  r.runner->PollOnce();
  EXPECT_TRUE(r.runner->Snapshot().empty());
  r.Plugin("late", "echo 'hw_late 1'\n");
  r.dir.Write("plugins/notaplugin.sh", "echo 'hw_no 1'\n");
  r.runner->PollOnce();
  ASSERT_EQ(r.runner->Snapshot().size(), 1u);
  EXPECT_EQ(r.runner->Snapshot()[0].name, "late");
  std::filesystem::remove(r.dir.path() / "plugins/late_metrics_plugin.sh");
  r.runner->PollOnce();
  EXPECT_TRUE(r.runner->Snapshot().empty());
}

// Issue #14, finding 10: processes that leave the plugin's process group.
TEST(PluginRunner, ProcessesThatSetsidAwayAreKilledAfterTheRun) {
  Runner r(std::chrono::milliseconds(3000));
  const std::string d = r.dir.str();
  r.dir.Write("detach.sh", "echo $$ > \"$1\"\nexec sleep 300\n");
  r.dir.Write("nest.sh", "setsid bash " + d + "/detach.sh \"$1\" </dev/null >/dev/null 2>&1 &\nwait\n");
  r.Plugin("escape", "setsid bash " + d + "/detach.sh " + d + "/a </dev/null >/dev/null 2>&1 &\n"
                     "setsid bash " + d + "/nest.sh " + d + "/b </dev/null >/dev/null 2>&1 &\n"
                     "for i in $(seq 200); do [ -s " + d + "/a ] && [ -s " + d + "/b ] && break; sleep 0.01; done\n"
                     "echo 'hw_escaped 1'\n");
  r.runner->PollOnce();
  auto st = r.Status("escape");
  EXPECT_EQ(st.last_exit, 0);
  EXPECT_EQ(Index(st.families).At("hw_escaped{}"), 1);
  EXPECT_GE(st.escaped_killed, 2u);  // the two sleeps (and the nest.sh shell)
  EXPECT_TRUE(Gone(std::stoi(r.Read("a"))));
  EXPECT_TRUE(Gone(std::stoi(r.Read("b"))));
}

TEST(PluginRunner, ProcessesThatSetsidAwayAreKilledOnTimeout) {
  Runner r(std::chrono::milliseconds(500));
  const std::string d = r.dir.str();
  r.Plugin("hang", "setsid bash -c 'echo $$ > " + d + "/a; exec sleep 300' </dev/null >/dev/null 2>&1 &\nsleep 300\n");
  r.runner->PollOnce();
  auto st = r.Status("hang");
  EXPECT_EQ(st.timeouts, 1u);
  EXPECT_TRUE(Gone(std::stoi(r.Read("a"))));
}

TEST(PluginRunner, ProcessesThatSetsidAwayAreKilledWhenTheRunnerStops) {
  auto r = std::make_unique<Runner>(std::chrono::milliseconds(60000));
  const std::string d = r->dir.str();
  r->Plugin("running", "setsid bash -c 'echo $$ > " + d + "/a; exec sleep 300' </dev/null >/dev/null 2>&1 &\nsleep 300\n");
  r->runner->Start();
  for (int i = 0; i < 500 && r->Read("a").empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::string a = r->Read("a");
  ASSERT_FALSE(a.empty());
  r->runner.reset();  // what the exporter does on SIGTERM
  EXPECT_TRUE(Gone(std::stoi(a)));
}

TEST(PluginRunner, StdoutAndSeriesAreCappedAndTheExcessCounted) {
  Runner r(std::chrono::milliseconds(10000), [](PluginRunnerOptions& o) {
    o.max_output_bytes = 4096;
    o.max_series = 50;
  });
  // 1000 lines of 21 bytes and a 13-byte STATE line: 21,013 bytes.
  r.Plugin("big", "for i in $(seq 1000); do printf 'hw_big{i=\"%06d\"} 1\\n' $i; done\necho '# STATE kept'\n");
  r.runner->PollOnce();
  auto st = r.Status("big");
  auto s = Index(st.families);
  EXPECT_EQ(s.samples.size(), 50u);
  EXPECT_TRUE(s.Has(R"(hw_big{i="000001"})"));
  EXPECT_FALSE(s.Has(R"(hw_big{i="000051"})"));
  EXPECT_EQ(st.dropped_bytes, 21013u - 195u * 21u);  // kept: the 195 whole lines in 4096 bytes
  EXPECT_EQ(st.dropped_series, 195u - 50u);
  EXPECT_EQ(st.invalid_lines, 0u);  // the cut line is not parsed as garbage
  EXPECT_EQ(r.runner->StateOf("big"), "kept");
}

TEST(PluginRunner, StderrIsLoggedPerLineUpToTheCap) {
  TempDir logdir;
  const std::string log = logdir.str() + "/exporter.log";
  ASSERT_TRUE(OpenLog(log));
  Runner r(std::chrono::milliseconds(10000), [](PluginRunnerOptions& o) { o.max_stderr_bytes = 100; });
  r.Plugin("noisy", "echo first line >&2\nhead -c 100000 /dev/zero | tr '\\0' e >&2\necho 'hw_n 1'\n");
  r.runner->PollOnce();
  auto st = r.Status("noisy");
  EXPECT_EQ(st.stderr_dropped_bytes, 11u + 100000u - 100u);
  EXPECT_EQ(Index(st.families).At("hw_n{}"), 1);
  std::ifstream f(log);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("] [mt-exporter] noisy: stderr: first line\n"), std::string::npos) << text;
  EXPECT_NE(text.find("noisy: stderr: [99911 more bytes dropped; at most 100 bytes per run are logged (--plugin-max-stderr)]"),
            std::string::npos)
      << text;
  EXPECT_LT(text.size(), 1000u);
}

TEST(SplitTruncatedPluginOutput, CutsAtTheLastWholeLineAndTakesStateFromTheTail) {
  auto a = SplitTruncatedPluginOutput("m 1\nm 2\nm 3 pa", "rtial\nlast 1\n# STATE s9\n");
  EXPECT_EQ(a.metrics, "m 1\nm 2\n");
  EXPECT_EQ(a.state, "s9");
  auto b = SplitTruncatedPluginOutput("no newline at all", "tail without newline");
  EXPECT_EQ(b.metrics, "");
  EXPECT_FALSE(b.state);
  // The tail's first line may be the end of a longer one: it never counts as STATE.
  auto c = SplitTruncatedPluginOutput("m 1\n", "# STATE fake");
  EXPECT_FALSE(c.state);
}

TEST(SplitPluginOutput, OnlyTheLastLineCanBeState) {
  auto a = SplitPluginOutput("m 1\n# STATE abc|1\n");
  EXPECT_EQ(a.metrics, "m 1");
  EXPECT_EQ(a.state, "abc|1");
  auto b = SplitPluginOutput("# STATE early\nm 1\n");
  EXPECT_FALSE(b.state);
  auto c = SplitPluginOutput("# STATE only");
  EXPECT_EQ(c.metrics, "");
  EXPECT_EQ(c.state, "only");
}

}  // namespace
}  // namespace mt::exporter
