// tools/supervise: the restart decision table and the node ledger (a real file, appended
// by concurrent writers).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "tests/unit/tools/test_util.h"
#include "tools/supervise/decision.h"
#include "tools/supervise/node_ledger.h"
#include "tools/supervise/notifier.h"
#include "tools/supervise/watch_rules.h"

namespace mt::tools {
namespace {
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

AttemptDiagnosis Failed(const std::string& job, const std::string& cls, int64_t step, std::vector<std::string> culprits = {},
                        std::optional<int64_t> checkpoint = std::nullopt) {
  return {job, "failed", cls, step, checkpoint, std::move(culprits)};
}

TEST(RestartDecision, TransientClassesRestartFromTheCheckpointWithoutTheCulprit) {
  for (const char* cls : {"hang", "nccl_error", "heartbeat", "node_fail", "gpu_hw_error", "preempted"}) {
    Decision d = Decide(Failed("101", cls, 420, {"gpu-07"}, 400), {}, 0, {});
    EXPECT_EQ(d.action, "restart") << cls;
    EXPECT_THAT(d.exclude, ElementsAre("gpu-07")) << cls;
    EXPECT_EQ(d.resume_step, 400) << cls;
  }
  // A hang is judged while the job still "runs"
  AttemptDiagnosis hung{"102", "hang", "hang", 3841, 3800, {}};
  EXPECT_EQ(Decide(hung, {}, 0, {}).action, "restart");
  // no checkpoint: from the start, and the reason says so
  EXPECT_THAT(Decide(Failed("103", "nccl_error", 20), {}, 0, {}).reason, HasSubstr("from the start"));
}

TEST(RestartDecision, WhatARestartCannotFixStops) {
  for (const char* cls : {"oom", "host_oom", "python_exception", "model_not_found", "container_pull_fail", "cancelled"})
    EXPECT_EQ(Decide(Failed("201", cls, 10), {}, 0, {}).action, "stop") << cls;
  EXPECT_EQ(Decide({"202", "completed", "completed", 5000, 5000, {}}, {}, 0, {}).action, "stop");
  EXPECT_EQ(Decide({"203", "running", "running", 50, std::nullopt, {}}, {}, 0, {}).action, "continue");
}

TEST(RestartDecision, TheSameFailureAtTheSameStepTwiceIsTheProgramsAndStops) {
  const auto first = Failed("301", "nccl_error", 777, {"gpu-02"}, 700);
  const auto again = Failed("302", "nccl_error", 777, {"gpu-05"}, 700);
  Decision d = Decide(again, {first}, 1, {});
  EXPECT_EQ(d.action, "stop");
  EXPECT_THAT(d.reason, HasSubstr("again (job 301"));
  // the same class at another step is another transient failure
  EXPECT_EQ(Decide(Failed("303", "nccl_error", 900, {}, 800), {first}, 1, {}).action, "restart");
}

TEST(RestartDecision, RestartsAreBoundedAndManyCulpritsMeanTheFabric) {
  EXPECT_EQ(Decide(Failed("401", "hang", 10), {}, 3, {}).action, "stop");
  RestartPolicy p;
  p.max_excluded = 2;
  Decision d = Decide(Failed("402", "nccl_error", 10, {"a", "b", "c"}), {}, 0, p);
  EXPECT_EQ(d.action, "restart");
  EXPECT_THAT(d.exclude, IsEmpty());
  EXPECT_THAT(d.reason, HasSubstr("the fabric, not a node"));
}

TEST(RestartDecision, AnUnknownClassIsAHumansToJudge) {
  Decision d = Decide(Failed("501", "something_new", 10), {}, 0, {});
  EXPECT_EQ(d.action, "stop");
  EXPECT_THAT(d.reason, HasSubstr("a human decides"));
  EXPECT_EQ(ActionForClass("something_new"), "");
}

class NodeLedgerTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  NodeLedger ledger_ = NodeLedger::ForWorkspace(dir_.path());
  static LedgerEntry Hit(int64_t t, const std::string& host, const std::string& job, const std::string& cls = "gpu_hw_error") {
    return {t, host, job, "implicated", cls, "XID 79", "triage"};
  }
  static LedgerEntry Clean(int64_t t, const std::string& host, const std::string& job) { return {t, host, job, "clean", "", "", ""}; }
};

constexpr int64_t kNow = 1772000000, kDay = 86400;

TEST_F(NodeLedgerTest, ARepeatOffenderIsExcludedUntilACleanJobReleasesIt) {
  ASSERT_TRUE(ledger_.Append({Hit(kNow - 3 * kDay, "gpu-07", "10"), Hit(kNow - 2 * kDay, "gpu-03", "11")}).ok());
  ASSERT_TRUE(ledger_.Append({Hit(kNow - kDay, "gpu-07", "12", "nccl_error")}).ok());
  std::vector<std::string> out;
  ASSERT_TRUE(ledger_.Excluded({}, kNow, &out).ok());
  EXPECT_THAT(out, ElementsAre("gpu-07"));
  std::vector<NodeStanding> s;
  ASSERT_TRUE(ledger_.Standings({}, kNow, &s).ok());
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].host, "gpu-07");
  EXPECT_EQ(s[0].implications, 2);
  EXPECT_EQ(s[0].last_class, "nccl_error");
  EXPECT_FALSE(s[1].excluded);
  // a clean job on gpu-07 releases it; a new implication counts from there
  ASSERT_TRUE(ledger_.Append({Clean(kNow - 3600, "gpu-07", "13")}).ok());
  ASSERT_TRUE(ledger_.Excluded({}, kNow, &out).ok());
  EXPECT_THAT(out, IsEmpty());
  // outside the window, implications no longer count
  ASSERT_TRUE(ledger_.Append({Hit(kNow - 10 * kDay, "gpu-09", "1"), Hit(kNow - 9 * kDay, "gpu-09", "2")}).ok());
  ASSERT_TRUE(ledger_.Excluded({}, kNow, &out).ok());
  EXPECT_THAT(out, IsEmpty());
  ASSERT_TRUE(ledger_.Excluded({2, 14 * kDay}, kNow, &out).ok());
  EXPECT_THAT(out, ElementsAre("gpu-09"));
}

TEST_F(NodeLedgerTest, BadEntriesAreRefusedAndForeignLinesSkipped) {
  EXPECT_EQ(ledger_.Append({Hit(kNow, "../etc/passwd", "1")}).code(), base::Errc::kInvalid);
  EXPECT_EQ(ledger_.Append({{kNow, "gpu-01", "1", "blessed", "", "", ""}}).code(), base::Errc::kInvalid);
  ASSERT_TRUE(ledger_.Append({Hit(kNow, "gpu-01", "1")}).ok());
  std::ofstream(ledger_.file(), std::ios::app) << "not json\n{\"time\": 1, \"host\": \"a b\", \"event\": \"clean\"}\n";
  std::vector<LedgerEntry> all;
  int skipped = 0;
  ASSERT_TRUE(ledger_.Read(&all, &skipped).ok());
  EXPECT_EQ(all.size(), 1u);
  EXPECT_EQ(skipped, 2);
}

TEST_F(NodeLedgerTest, ConcurrentWritersNeverInterleave) {
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w)
    writers.emplace_back([this, w] {
      for (int i = 0; i < 50; ++i)
        EXPECT_TRUE(ledger_.Append({Hit(kNow - i, "gpu-" + std::to_string(w), std::to_string(i)),
                                    Hit(kNow - i, "gpu-x" + std::to_string(w), std::to_string(i))}).ok());
    });
  for (auto& t : writers) t.join();
  std::vector<LedgerEntry> all;
  int skipped = 0;
  ASSERT_TRUE(ledger_.Read(&all, &skipped).ok());
  EXPECT_EQ(all.size(), 400u);
  EXPECT_EQ(skipped, 0);
}

// A webhook receiver on loopback: fails the first `fail_first` posts with 503, then
// answers 200 (after `delay_ms`), recording each accepted body and Idempotency-Key.
class Receiver {
 public:
  explicit Receiver(int fail_first = 0, int delay_ms = 0) : fail_left_(fail_first) {
    server_.Post("/hooks/T0K3N-secret", [this, delay_ms](const httplib::Request& req, httplib::Response& res) {
      ++posts_;
      if (delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      if (fail_left_ > 0) {
        --fail_left_;
        res.status = 503;
        return;
      }
      std::lock_guard lock(mu_);
      keys_.push_back(req.get_header_value("Idempotency-Key"));
      bodies_.push_back(Json::parse(req.body));
      res.status = 200;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 500 && !server_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ~Receiver() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hooks/T0K3N-secret"; }
  std::vector<std::string> keys() {
    std::lock_guard lock(mu_);
    return keys_;
  }
  std::vector<Json> bodies() {
    std::lock_guard lock(mu_);
    return bodies_;
  }
  int posts() const { return posts_; }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> fail_left_, posts_{0};
  std::mutex mu_;
  std::vector<std::string> keys_;
  std::vector<Json> bodies_;
};

class NotifierTest : public ::testing::Test {
 protected:
  Webhook Hook(const Receiver& r, const std::string& format = "json") {
    setenv("MT_TEST_WEBHOOK_URL", r.url().c_str(), 1);
    Webhook h;
    h.name = "ops";
    h.url.env = "MT_TEST_WEBHOOK_URL";
    h.format = format;
    h.timeout_seconds = 2;
    h.backoff_seconds = 0.05;
    return h;
  }
  static Notice Note(const std::string& kind, const std::string& text) { return {"", 0, "8311", kind, text, Json::object()}; }
  testing::TempDir dir_;
};

TEST_F(NotifierTest, EveryNoticeReachesTheWebhookOnceInOrderThroughRetriesAndRestarts) {
  Receiver r(/*fail_first=*/2);
  const Webhook hook = Hook(r);
  {
    Outbox box(dir_.path());
    ASSERT_TRUE(box.Add(Note("hang", "no step for 31 min")).ok());
    ASSERT_TRUE(box.Add(Note("decision", "restart excluding gpu-07")).ok());
    int delivered = 0;
    ASSERT_TRUE(box.Deliver(hook, &delivered).ok());   // the first two posts fail, the retries succeed
    EXPECT_EQ(delivered, 2);
  }
  // A new watch process on the same outbox: only what was added since goes out.
  Outbox again(dir_.path());
  ASSERT_TRUE(again.Add(Note("restarted", "job 8312 submitted")).ok());
  int delivered = 0;
  ASSERT_TRUE(again.Deliver(hook, &delivered).ok());
  EXPECT_EQ(delivered, 1);
  ASSERT_TRUE(again.Deliver(hook, &delivered).ok());
  EXPECT_EQ(delivered, 0);
  const auto bodies = r.bodies();
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_EQ(bodies[0]["kind"], "hang");
  EXPECT_EQ(bodies[2]["text"], "job 8312 submitted");
  const auto keys = r.keys();
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()).size(), 3u);   // distinct idempotency keys
  EXPECT_EQ(keys[0], bodies[0]["id"]);
  EXPECT_EQ(r.posts(), 5);
}

TEST_F(NotifierTest, AFailingWebhookKeepsTheNoticePendingAndTheErrorNeverShowsTheUrl) {
  Receiver r(/*fail_first=*/100);
  Webhook hook = Hook(r, "slack");
  hook.attempts = 2;
  Outbox box(dir_.path());
  ASSERT_TRUE(box.Add(Note("hang", "stuck")).ok());
  int delivered = 0;
  base::Status st = box.Deliver(hook, &delivered);
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("HTTP 503"));
  EXPECT_THAT(st.message(), ::testing::Not(HasSubstr("T0K3N")));
  std::vector<Notice> pending;
  ASSERT_TRUE(box.Pending(hook, &pending).ok());
  EXPECT_EQ(pending.size(), 1u);
  EXPECT_EQ(r.posts(), 2);
  // slack's shape
  EXPECT_EQ(WebhookPayload(hook, pending[0]), (Json{{"text", "[mt] job 8311: hang — stuck"}}));
}

TEST_F(NotifierTest, ASlowReceiverIsCutAtTheTimeoutAndAMissingSecretIsNamed) {
  Receiver slow(0, /*delay_ms=*/3000);
  Webhook hook = Hook(slow);
  hook.timeout_seconds = 1;
  hook.attempts = 1;
  Outbox box(dir_.path());
  ASSERT_TRUE(box.Add(Note("state", "RUNNING")).ok());
  int delivered = 0;
  const auto t0 = std::chrono::steady_clock::now();
  base::Status st = box.Deliver(hook, &delivered);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(st.message(), ::testing::Not(HasSubstr("T0K3N")));
  hook.url.env = "MT_TEST_NO_SUCH_VARIABLE";
  st = box.Deliver(hook, &delivered);
  EXPECT_THAT(st.message(), HasSubstr("environment variable MT_TEST_NO_SUCH_VARIABLE is not set"));
  hook.name = "../etc";
  EXPECT_EQ(box.Deliver(hook, &delivered).code(), base::Errc::kInvalid);
}

// ---- the watch's rules (tools/supervise/watch_rules.h) ----------------------------------------

// Triage's answer, reduced to what the watch reads.
mt::Json Triage(const std::string& status, const std::string& cls, int64_t last_step, double silent, double threshold = 600) {
  return {{"status", status},
          {"class", cls},
          {"last_step", last_step},
          {"hang", {{"silent_seconds", silent}, {"threshold_seconds", threshold}}},
          {"progress", {{"last_checkpoint_step", 100}}},
          {"tgs", {{"phases", mt::Json::array()}}}};
}

TEST(WatchRules, AHangIsReportedOnceWithARestartDecisionAndProgressClearsIt) {
  WatchMemory m;
  WatchConfig c;
  c.hang_seconds = 30;
  WatchTick t = Observe(m, "7", "RUNNING", Triage("running", "running", 120, 10), c);
  ASSERT_EQ(t.findings.size(), 1u);
  EXPECT_EQ(t.findings[0].kind, "state");
  EXPECT_FALSE(t.decision.has_value());
  t = Observe(m, "7", "RUNNING", Triage("running", "running", 120, 31), c);
  ASSERT_EQ(t.findings.size(), 2u);
  EXPECT_EQ(t.findings[0].kind, "hang");
  EXPECT_EQ(t.findings[1].kind, "decision");
  ASSERT_TRUE(t.decision.has_value());
  EXPECT_EQ(t.decision->action, "restart");
  EXPECT_EQ(t.decision->resume_step, 100);
  // Still silent at the same step: nothing new, even after the memory went through JSON.
  m = WatchMemory::FromJson(m.ToJson());
  EXPECT_TRUE(Observe(m, "7", "RUNNING", Triage("running", "running", 120, 90), c).findings.empty());
  // Steps again, then a new hang at a later step is a new finding.
  t = Observe(m, "7", "RUNNING", Triage("running", "running", 130, 2), c);
  ASSERT_EQ(t.findings.size(), 1u);
  EXPECT_EQ(t.findings[0].text, "progress again after the hang");
  EXPECT_EQ(Observe(m, "7", "RUNNING", Triage("running", "running", 130, 40), c).findings.size(), 2u);
}

TEST(WatchRules, ARestartStartsANewAttemptThatRemembersTheChain) {
  WatchMemory m;
  WatchConfig c;
  c.hang_seconds = 30;
  Observe(m, "7", "RUNNING", Triage("running", "running", 120, 10), c);
  WatchTick t = Observe(m, "7", "RUNNING", Triage("running", "running", 120, 31), c);
  ASSERT_TRUE(t.decision && t.decision->action == "restart");
  m.restart_plan = std::string(32, 'a');
  m.StartAttempt("8");
  m = WatchMemory::FromJson(m.ToJson());
  EXPECT_EQ(m.job, "8");
  EXPECT_EQ(m.restarts, 1);
  EXPECT_TRUE(m.restart_plan.empty());
  ASSERT_EQ(m.earlier.size(), 1u);
  EXPECT_EQ(m.earlier[0].job, "7");
  EXPECT_EQ(m.earlier[0].last_step, 120);
  // The new attempt is watched from scratch …
  t = Observe(m, "8", "RUNNING", Triage("running", "running", 120, 10), c);
  ASSERT_EQ(t.findings.size(), 1u);
  EXPECT_EQ(t.findings[0].kind, "state");
  // … and hanging at the same step again is the program's: stop.
  t = Observe(m, "8", "RUNNING", Triage("running", "running", 120, 31), c);
  ASSERT_TRUE(t.decision.has_value());
  EXPECT_EQ(t.decision->action, "stop");
  EXPECT_THAT(t.decision->reason, ::testing::HasSubstr("job 7 failed the same way"));
}

TEST(WatchRules, AHostLocalFailureBlamesTheHostItsEvidenceNamesAndACollectiveOneBlamesNone) {
  WatchConfig c;
  auto ended = [&](const std::string& cls, const std::vector<std::pair<std::string, std::string>>& lines) {
    WatchMemory m;
    mt::Json t = Triage("failed", cls, 300, 5);
    t["evidence"] = mt::Json::array();
    for (const auto& [sig, l] : lines) t["evidence"].push_back({{"signature", sig}, {"text", l}});
    return Observe(m, "9", "FAILED", t, c);
  };
  WatchTick t = ended("gpu_hw_error", {{"ecc_uncorrectable", "7: chi2853:4242:4250 [3] NCCL WARN Cuda failure 'uncorrectable ECC error encountered'"},
                                       {"nvidia_xid", "Feb 24 19:06:00 chi2875 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus."},
                                       // a secondary class's first line: the rank that waited is not blamed
                                       {"nccl_timeout", "chi2860:4242:4250 [0] NCCL WARN Timeout waiting for connect from peer"}});
  ASSERT_TRUE(t.decision.has_value());
  EXPECT_EQ(t.decision->action, "restart");
  EXPECT_EQ(t.decision->exclude, (std::vector<std::string>{"chi2853", "chi2875"}));
  t = ended("node_fail", {{"node_failure", "srun: error: Node failure on chi2801"}});
  EXPECT_EQ(t.decision->exclude, (std::vector<std::string>{"chi2801"}));
  // A collective timeout is reported by the ranks that waited: nobody is blamed.
  t = ended("nccl_error", {{"nccl_timeout", "chi2853:4242:4250 [0] NCCL WARN Timeout waiting for connect from peer"}});
  EXPECT_TRUE(t.decision->exclude.empty());
}

// The job's metrics (query_tsdb playbook auto, asked by the watch) may name the host that died
// behind a collective error: a node death with enough confidence is blamed, a weak one or
// another family (a hang with every host alive) is not.
TEST(WatchRules, TheMetricsNodeDeathBlamesItsConfidentHostsWhateverTheLogsClass) {
  WatchConfig c;
  auto ended = [&](const mt::Json& attribution) {
    WatchMemory m;
    mt::Json t = Triage("failed", "nccl_error", 300, 5);
    t["evidence"] = mt::Json::array({{{"signature", "nccl_timeout"}, {"text", "chi2853:4242:4250 [0] NCCL WARN Timeout waiting for connect"}}});
    t["tsdb_attribution"] = attribution;
    return Observe(m, "9", "FAILED", t, c);
  };
  const mt::Json culprits = mt::Json::array({{{"host", "chi2801"}, {"confidence", 0.93}}, {{"host", "chi2802"}, {"confidence", 0.31}}});
  WatchTick t = ended({{"family", "node_death"}, {"culprits", culprits}});
  ASSERT_TRUE(t.decision.has_value());
  EXPECT_EQ(t.decision->action, "restart");
  EXPECT_EQ(t.decision->exclude, (std::vector<std::string>{"chi2801"}));
  t = ended({{"family", "collective_hang"}, {"culprits", mt::Json::array()}});
  EXPECT_TRUE(t.decision->exclude.empty());
  t = ended({{"family", "thermal"}, {"culprits", culprits}});   // a slowdown's family: not a death
  EXPECT_TRUE(t.decision->exclude.empty());
}

TEST(WatchRules, AHangBeforeTheFirstStepIsReportedOnce) {
  WatchMemory m;
  WatchConfig c;
  c.hang_seconds = 60;
  mt::Json t = Triage("running", "running", 0, 500);
  t["last_step"] = nullptr;   // initialising: no step yet
  // Start-up is not held to the step threshold: 500 s without a first step is within its
  // allowance (the larger of 600 s and 10 x 60 s) …
  EXPECT_TRUE(Observe(m, "7", "", t, c).findings.empty());
  t["hang"]["silent_seconds"] = 900;   // … 900 s is not
  EXPECT_EQ(Observe(m, "7", "", t, c).findings.size(), 2u);   // hang + decision
  m = WatchMemory::FromJson(m.ToJson());
  EXPECT_TRUE(Observe(m, "7", "", t, c).findings.empty());
}

TEST(WatchRules, TheSchedulersSuccessNeedsNoDecisionAndAFailureAfterARecoveredHangGetsOne) {
  WatchMemory done;
  WatchConfig c;
  WatchTick t = Observe(done, "7", "COMPLETED", Triage("running", "running", 50, 1), c);
  EXPECT_TRUE(t.finished);
  EXPECT_FALSE(t.decision.has_value());
  WatchMemory m;
  c.hang_seconds = 30;
  EXPECT_TRUE(Observe(m, "8", "RUNNING", Triage("running", "running", 10, 40), c).decision.has_value());   // the hang
  Observe(m, "8", "RUNNING", Triage("running", "running", 11, 1), c);                                     // progress again
  t = Observe(m, "8", "FAILED", Triage("failed", "oom", 12, 0), c);
  ASSERT_TRUE(t.decision.has_value());
  EXPECT_EQ(t.decision->action, "stop");
}

TEST(WatchRules, AnEndThatCallsForAnotherActionOverridesTheHangsDecision) {
  WatchConfig c;
  c.hang_seconds = 30;
  // Hang, then the job fails as a collective error: the restart stands, nothing new.
  WatchMemory a;
  EXPECT_EQ(Observe(a, "1", "", Triage("running", "running", 5, 40), c).decision->action, "restart");
  WatchTick t = Observe(a, "1", "", Triage("failed", "nccl_error", 5, 0), c);
  ASSERT_EQ(t.findings.size(), 1u);
  EXPECT_EQ(t.findings[0].kind, "ended");
  // Hang, then the job turns out to have run out of memory: stop, not restart.
  WatchMemory b;
  EXPECT_EQ(Observe(b, "2", "", Triage("running", "running", 5, 40), c).decision->action, "restart");
  t = Observe(b, "2", "", Triage("failed", "host_oom", 5, 0), c);
  ASSERT_TRUE(t.decision.has_value());
  EXPECT_EQ(t.decision->action, "stop");
  b = WatchMemory::FromJson(b.ToJson());
  EXPECT_TRUE(Observe(b, "2", "", Triage("failed", "host_oom", 5, 0), c).findings.empty());
}

TEST(WatchRules, WithoutAThresholdTriagesOwnHangRuleDecides) {
  WatchMemory m;
  WatchConfig c;
  EXPECT_TRUE(Observe(m, "7", "", Triage("running", "running", 5, 700, 600), c).findings.empty());   // triage says running
  WatchTick t = Observe(m, "7", "", Triage("hang", "hang", 5, 700, 600), c);
  ASSERT_FALSE(t.findings.empty());
  EXPECT_EQ(t.findings[0].kind, "hang");
}

TEST(WatchRules, TheEndIsReportedOnceAndAnOomStops) {
  WatchMemory m;
  WatchConfig c;
  WatchTick t = Observe(m, "9", "FAILED", Triage("failed", "oom", 42, 0), c);
  ASSERT_EQ(t.findings.size(), 3u);
  EXPECT_EQ(t.findings[0].kind, "state");
  EXPECT_EQ(t.findings[1].kind, "ended");
  EXPECT_EQ(t.findings[2].kind, "decision");
  EXPECT_EQ(t.decision->action, "stop");
  EXPECT_TRUE(t.finished);
  t = Observe(m, "9", "FAILED", Triage("failed", "oom", 42, 0), c);
  EXPECT_TRUE(t.findings.empty());
  EXPECT_TRUE(t.finished);
  // A completed job ends without a decision.
  WatchMemory done;
  t = Observe(done, "10", "", Triage("completed", "completed", 99, 0), c);
  ASSERT_EQ(t.findings.size(), 1u);
  EXPECT_EQ(t.findings[0].kind, "ended");
  EXPECT_FALSE(t.decision.has_value());
}

TEST(WatchRules, ThroughputDegradationByTriagesPhases) {
  WatchMemory m;
  WatchConfig c;
  mt::Json t = Triage("running", "tgs_degradation", 300, 1);
  t["tgs"]["phases"] = mt::Json::array({{{"mean", 3293.0}, {"steps", 97}, {"start_step", 0}},
                                        {{"mean", 2520.0}, {"steps", 10}, {"start_step", 252}}});
  EXPECT_TRUE(Observe(m, "8308", "", t, c).findings.empty());   // -23 % but only 10 steps so far
  t["tgs"]["phases"][1]["steps"] = 40;
  WatchTick tick = Observe(m, "8308", "", t, c);
  ASSERT_EQ(tick.findings.size(), 1u);
  EXPECT_EQ(tick.findings[0].kind, "degraded");
  EXPECT_NEAR(tick.findings[0].detail["drop_pct"].get<double>(), 23.5, 0.1);
  EXPECT_TRUE(Observe(m, "8308", "", t, c).findings.empty());
}

}  // namespace
}  // namespace mt::tools
