// The seed's case studies, checked on the bytes of the generated logs and on the timeline
// the TSDB and the event file are derived from.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>

#include "launcher/sim/job_log.h"
#include "launcher/sim/timeline.h"
#include "tests/unit/launcher/test_util.h"

namespace mt::launch::sim {
namespace {

struct Rendered {
  Scenario s;
  Timeline tl;
  std::string log;
  std::vector<std::string> lines;
};

Rendered Render(const std::string& id) {
  Rendered r;
  r.s = test::CaseStudy(id);
  r.tl = BuildTimeline(r.s);
  r.log = RenderJobLog(r.s, r.tl, {"/shared/outputs/.artifacts/artifact_x", "/outputs/" + r.s.JobDirName()});
  r.lines = test::Lines(r.log);
  return r;
}

// step -> Tokens/s/device from task 0's step lines (the analyze_job regex, MFU required).
std::map<int64_t, double> Task0Tgs(const Rendered& r) {
  static const std::regex re(
      R"(^\s*0: completed step:\s*(\d+),\s*seconds:\s*([0-9.]+),\s*TFLOP/s/device:\s*([0-9.]+),\s*MFU:\s*([0-9.]+)%,\s*Tokens/s/device:\s*([0-9.]+).*?loss:\s*([0-9.]+))");
  std::map<int64_t, double> out;
  std::smatch m;
  for (const auto& l : r.lines)
    if (std::regex_search(l, m, re)) out[std::stoll(m[1])] = std::stod(m[5]);
  return out;
}

double Mean(const std::map<int64_t, double>& tgs, int64_t a, int64_t b) {
  double sum = 0;
  int n = 0;
  for (const auto& [step, v] : tgs)
    if (step >= a && step <= b) sum += v, ++n;
  return n ? sum / n : 0;
}

int Count(const Rendered& r, const std::string& needle) {
  int n = 0;
  for (const auto& l : r.lines) n += l.find(needle) != std::string::npos;
  return n;
}

bool HasLine(const Rendered& r, const std::string& exact) {
  for (const auto& l : r.lines)
    if (l == exact) return true;
  return false;
}

std::smatch SummaryStatus(const Rendered& r) {
  static const std::regex re("Status:\\s*(?:\033\\[\\d+m)*(SUCCESS|FAILED)\\s*\\(exit\\s+(\\d+)\\)");
  std::smatch m;
  std::regex_search(r.log, m, re);
  return m;
}

TEST(CaseStudies, HeaderAndRankLabelsFollowTheLauncher) {
  const Rendered r = Render("7877");
  ASSERT_GT(r.lines.size(), 20u);
  EXPECT_EQ(r.lines[0], "JOB_ID=7877");
  EXPECT_EQ(r.lines[1], "JOB_NAME=JAX-deepseek3-671b-steps_10000");
  EXPECT_EQ(r.lines[2], "NNODES=24");
  EXPECT_EQ(r.lines[3], "JOB_NODELIST=chi[2836-2859]");
  EXPECT_EQ(r.lines[4].rfind("JAX_COORDINATOR_PORT=", 0), 0u);
  EXPECT_TRUE(HasLine(r, "PASSTHROUGH_ARGS=\"steps=10000\""));
  EXPECT_TRUE(HasLine(r, "==STAGE TIMEOUTS (override: STAGE_TIMEOUTS=\"stage:seconds,...\")=="));
  EXPECT_TRUE(HasLine(r, "== Preflight BEGIN (timeout=900s) =="));
  EXPECT_TRUE(HasLine(r, "== Training BEGIN (no timeout) =="));
  EXPECT_TRUE(HasLine(r, "=== GIT SUMMARY BEGIN ==="));
  // srun -l with 24 tasks pads labels to two characters.
  EXPECT_EQ(RankLabel(3, 24), " 3: ");
  EXPECT_EQ(RankLabel(23, 24), "23: ");
  EXPECT_EQ(RankLabel(0, 1), "0: ");
  EXPECT_GT(Count(r, " 3: completed step: 100,"), 0);
  EXPECT_EQ(Count(r, "Memstats: After params initialized:"), 24);
  EXPECT_EQ(Count(r, "Config param tensorboard_dir: /outputs/7877-JAX-deepseek3-671b-steps_10000/deepseek3-671b_7877/tensorboard/"), 24);
  // Every benign line of reference §3.7 that a real run prints is there.
  EXPECT_GT(Count(r, "NCCL WARN MSCCL++: Feature not enabled"), 0);
  EXPECT_GT(Count(r, "NCCL WARN LL cutoff points not detected for a supported arch gfx950"), 0);
  EXPECT_GT(Count(r, "Failed call to cuInit: UNKNOWN ERROR (303)"), 0);
  EXPECT_GT(Count(r, "MaxTextTrainerActor"), 0);
}

TEST(CaseStudies, Hang7877StopsAfterStep3841Of35Hours) {
  const Rendered r = Render("7877");
  const auto tgs = Task0Tgs(r);
  ASSERT_FALSE(tgs.empty());
  EXPECT_EQ(tgs.begin()->first, 0);
  EXPECT_EQ(tgs.rbegin()->first, 3841);
  EXPECT_EQ(Count(r, "completed step:"), 3842 * 24);  // one line per node per step
  const double hours = (r.tl.steps.back().end - r.tl.steps.front().start) / 3600;
  EXPECT_GT(hours, 34.5);
  EXPECT_LT(hours, 35.5);
  EXPECT_EQ(Count(r, "JOB SUMMARY"), 0);  // still hanging: no summary, no error
  EXPECT_EQ(Count(r, "NODE_EXIT"), 0);
  EXPECT_EQ(r.tl.outcome, Outcome::kHanging);
  EXPECT_EQ(r.tl.busy_wait_start, r.tl.steps.back().end);
  EXPECT_GE(r.tl.metrics_end - r.tl.busy_wait_start, 3600);  // the TSDB covers the hang
  EXPECT_EQ(r.lines.back().find("completed step: 3841,") != std::string::npos, true);
}

TEST(CaseStudies, Rdma8308HasFourTgsPhases) {
  const Rendered r = Render("8308");
  const auto tgs = Task0Tgs(r);
  EXPECT_NEAR(Mean(tgs, 5, 96), 3293, 8);
  EXPECT_NEAR(Mean(tgs, 97, 216), 2620, 8);
  EXPECT_NEAR(Mean(tgs, 217, 250), 3288, 10);
  EXPECT_NEAR(Mean(tgs, 252, 420), 2520, 8);
  EXPECT_EQ(tgs.rbegin()->first, 420);
  EXPECT_EQ(Count(r, "JOB SUMMARY"), 0);  // still running
  EXPECT_EQ(r.tl.outcome, Outcome::kRunning);
  // 8309: the same run without the four hosts.
  const Rendered r9 = Render("8309");
  EXPECT_NEAR(Mean(Task0Tgs(r9), 5, 330), 3287, 6);
  for (const char* bad : {"chi2822", "chi2834", "chi2835", "chi2882"}) {
    EXPECT_NE(r.log.find(bad), std::string::npos);
    EXPECT_EQ(r9.log.find(bad), std::string::npos) << bad;
  }
}

TEST(CaseStudies, Heartbeat8043MatchesTheSeed) {
  const Rendered r = Render("8043");
  EXPECT_TRUE(HasLine(r, " 8: completed step: 71, seconds: 30.309, TFLOP/s/device: 207.973, MFU: 8.32%, "
                         "Tokens/s/device: 1081.131, total_weights: 6291456, loss: " +
                             [&] {
                               char b[16];
                               std::snprintf(b, sizeof b, "%.3f", r.tl.steps.back().loss);
                               return std::string(b);
                             }()));
  EXPECT_EQ(r.s.hosts[8], "chi2853");
  EXPECT_EQ(r.s.hosts[9], "chi2865");
  EXPECT_EQ(r.s.hosts[10], "chi2875");
  EXPECT_EQ(FormatIsoTime(r.tl.crash_time), "2026-02-24T19:21:00Z");
  EXPECT_EQ(FormatIsoTime(r.tl.heartbeat_stop), "2026-02-24T19:06:00Z");
  EXPECT_TRUE(HasLine(r, " 0: UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats):"));
  EXPECT_TRUE(HasLine(r, " 0: /job:jax_worker/replica:0/task:8"));
  EXPECT_TRUE(HasLine(r, " 0: /job:jax_worker/replica:0/task:10"));
  EXPECT_TRUE(HasLine(r, " 0: The tasks have crashed. Check the task logs for an earlier error to debug further."));
  // The accused tasks were alive: each logs its own termination at 19:21:00 ...
  for (const char* task : {" 8: F0224 19:21:00.", "10: F0224 19:21:00."}) {
    bool found = false;
    for (const auto& l : r.lines)
      found = found || (l.rfind(task, 0) == 0 &&
                        l.find("client.h:77] Terminating process because the JAX distributed service detected fatal errors") !=
                            std::string::npos);
    EXPECT_TRUE(found) << task;
  }
  EXPECT_TRUE(HasLine(r, " 8: /job:jax_worker/replica:0/task:8"));
  EXPECT_GT(Count(r, " 8: E0224 19:21:00."), 0);  // Polled error from coordination service
  EXPECT_GT(Count(r, "Polled error from coordination service"), 0);
  // ... and completed step 71 like everyone else.
  EXPECT_EQ(Count(r, "completed step: 71,"), 24);
  EXPECT_EQ(Count(r, "completed step: 72,"), 0);
  const auto st = SummaryStatus(r);
  ASSERT_FALSE(st.empty());
  EXPECT_EQ(st[1], "FAILED");
  EXPECT_EQ(Count(r, "NODE_EXIT host=chi2853 exit=134"), 1);
  EXPECT_EQ(Count(r, "Saved a checkpoint at step 50."), 24);
}

TEST(CaseStudies, RestoreLeak8102AddsTwoRcclInitWaves) {
  const Rendered a = Render("8101");
  const Rendered b = Render("8102");
  const int per_wave = 24 * 8;  // one line per GPU of every node
  EXPECT_EQ(Count(a, "init.cc:2095 NCCL WARN MSCCL++"), 3 * per_wave);
  EXPECT_EQ(Count(b, "init.cc:2095 NCCL WARN MSCCL++"), 5 * per_wave);
  const auto ta = Task0Tgs(a), tb = Task0Tgs(b);
  EXPECT_EQ(ta.begin()->first, 0);
  EXPECT_EQ(tb.begin()->first, 201);  // restored from the step-200 checkpoint
  EXPECT_TRUE(HasLine(b, " 0: restoring from this run's directory step 200"));
  EXPECT_GT(Count(b, "SingleReplicaArrayHandler"), 0);
  EXPECT_GT(Count(a, "No existing checkpoints found, not restoring checkpoint."), 0);
  // Steady TGS over the overlapping steps, skipping the steps slowed by checkpoint saves.
  auto steady = [](const std::map<int64_t, double>& t) {
    double sum = 0;
    int n = 0;
    for (const auto& [step, v] : t)
      if (step >= 210 && step <= 449 && (step - 1) % 100 != 0) sum += v, ++n;
    return sum / n;
  };
  EXPECT_NEAR(steady(ta), 3295, 5);
  EXPECT_NEAR(steady(tb), 3261, 5);
  EXPECT_EQ(SummaryStatus(a)[1], "SUCCESS");
  EXPECT_EQ(SummaryStatus(b)[1], "SUCCESS");
}

TEST(CaseStudies, Moe7938DeclinesFromStep450) {
  const Rendered r = Render("7938");
  const auto tgs = Task0Tgs(r);
  const double before = Mean(tgs, 300, 449), after = Mean(tgs, 700, 799);
  EXPECT_NEAR(before, 3290, 8);
  EXPECT_NEAR(after / before, 0.88, 0.01);
  EXPECT_LT(Mean(tgs, 455, 470), before * 0.995);  // already sliding right after the spike
  const StepRecord& spike = r.tl.steps[450];
  ASSERT_EQ(spike.step, 450);
  EXPECT_GT(spike.moe_lb_loss, 5 * r.tl.steps[440].moe_lb_loss);
}

TEST(CaseStudies, Healthy8104AndOom8105) {
  const Rendered ok = Render("8104");
  EXPECT_EQ(SummaryStatus(ok)[1], "SUCCESS");
  EXPECT_EQ(SummaryStatus(ok)[2], "0");
  EXPECT_TRUE(HasLine(ok, "NNODES=8"));
  EXPECT_EQ(Count(ok, "Config param quantization: QuantizationType.FP8"), 8);
  EXPECT_GT(Count(ok, "[MFU] MFU tracking enabled (gpu=MI355X, dtype=fp8, peak=5000 TFLOP/s"), 0);
  EXPECT_TRUE(HasLine(ok, "== Training END (" + std::to_string(std::lround(ok.tl.train_end - ok.tl.train_begin)) + "s) =="));
  EXPECT_EQ(Task0Tgs(ok).rbegin()->first, 59);

  const Rendered oom = Render("8105");
  EXPECT_EQ(Count(oom, "completed step:"), 0);
  EXPECT_EQ(Count(oom, "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 21.47GiB"), 8);
  EXPECT_GT(Count(oom, "Memstats: After params initialized:"), 0);
  const auto st = SummaryStatus(oom);
  EXPECT_EQ(st[1], "FAILED");
  EXPECT_EQ(st[2], "1");
  EXPECT_NE(oom.log.find("\033[0m — Training FAILED (exit=1)"), std::string::npos);
  EXPECT_EQ(Count(oom, "NODE_EXIT host="), 8);
  EXPECT_EQ(oom.lines.back(), "=================================================================");
}

TEST(CaseStudies, WallTimeFormat) {
  EXPECT_EQ(FormatWall(45), "45s");
  EXPECT_EQ(FormatWall(12 * 60 + 3), "12m 3s");
  EXPECT_EQ(FormatWall(35 * 3600 + 2 * 60 + 1), "35h 2m 1s");
}

TEST(CaseStudies, RenderingIsDeterministic) {
  EXPECT_EQ(Render("8043").log, Render("8043").log);
}

}  // namespace
}  // namespace mt::launch::sim
