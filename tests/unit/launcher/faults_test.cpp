// Every fault kind leaves the signature the tools look for (reference §3.6, §4.1).
#include <gtest/gtest.h>

#include "launcher/sim/job_log.h"
#include "launcher/sim/metrics_model.h"
#include "launcher/sim/timeline.h"
#include "tests/unit/launcher/test_util.h"

namespace mt::launch::sim {
namespace {

constexpr const char* kBase = R"(
job:
  id: "700"
  model: llama2-70b
  hosts: "gpu[01-04]"
  start: "2026-01-01T00:00:00Z"
training:
  steps: 100
  per_device_batch_size: 2
  max_target_length: 4096
  tgs: 2000
  compile_s: 60
faults:
)";

struct SimRun {
  Scenario s;
  Timeline tl;
  std::string log;
};

SimRun Make(const std::string& fault) {
  SimRun r;
  std::string err;
  EXPECT_TRUE(ParseScenario(std::string(kBase) + fault, "", &r.s, &err)) << err;
  r.tl = BuildTimeline(r.s);
  r.log = RenderJobLog(r.s, r.tl, {"/a", "/outputs/x"});
  return r;
}

bool Has(const SimRun& r, const std::string& needle) { return r.log.find(needle) != std::string::npos; }

TEST(Faults, NcclTimeout) {
  const SimRun r = Make("  - kind: nccl_timeout\n    step: 40\n    timeout_s: 600\n");
  EXPECT_EQ(r.tl.steps.back().step, 39);
  EXPECT_TRUE(Has(r, "NCCL WARN [Service thread] Timeout waiting for peer after 600 seconds"));
  EXPECT_TRUE(Has(r, "ncclSystemError"));
  EXPECT_TRUE(Has(r, "FAILED (exit 1)\033[0m — Training FAILED (exit=1)"));
  EXPECT_NEAR(r.tl.crash_time - r.tl.busy_wait_start, 600, 1e-6);
}

TEST(Faults, NodeFailure) {
  const SimRun r = Make("  - kind: node_fail\n    hosts: [gpu03]\n    step: 50\n");
  EXPECT_TRUE(Has(r, "\n2: NODE_EXIT host=gpu03 exit=137\n"));
  EXPECT_TRUE(Has(r, "srun: error: gpu03: task 2: Killed"));
  EXPECT_TRUE(Has(r, "FAILED (exit 137)"));
  const MetricsModel m(r.s, r.tl);
  EXPECT_EQ(m.ActivityAt(2, r.tl.node_death + 1), Activity::kAbsent);
  EXPECT_NE(m.ActivityAt(1, r.tl.node_death + 1), Activity::kAbsent);
  double ue = 0;
  for (const auto& sr : m.series())
    if (sr.family == Family::kGpuRasUmcUe && sr.host == 2)
      for (double t = r.tl.metrics_start; t < r.tl.node_death; t += 10) ue += m.CounterIncrease(sr, t, 10, 0);
  EXPECT_EQ(ue, 1);
}

TEST(Faults, CancelAndTimeLimit) {
  const SimRun c = Make("  - kind: cancel\n    step: 30\n");
  EXPECT_TRUE(Has(c, "slurmstepd: error: *** JOB 700 ON gpu01 CANCELLED AT 2026-01-01T"));
  EXPECT_FALSE(Has(c, "DUE TO TIME LIMIT"));
  EXPECT_TRUE(Has(c, "NODE_EXIT host=gpu04 exit=143"));
  EXPECT_TRUE(Has(c, "FAILED (exit 143)\033[0m — CANCELLED (scancel / SIGTERM)"));
  const SimRun t = Make("  - kind: time_limit\n    step: 30\n");
  EXPECT_TRUE(Has(t, " DUE TO TIME LIMIT ***"));
  EXPECT_EQ(t.tl.exit_code, 143);
}

TEST(Faults, HangThenCancel) {
  const SimRun r = Make("  - kind: hang\n    step: 20\n    duration_s: 1800\n    then: cancel\n");
  EXPECT_EQ(r.tl.steps.back().step, 20);
  EXPECT_NEAR(r.tl.crash_time - r.tl.busy_wait_start, 1800, 1e-6);
  EXPECT_TRUE(Has(r, "CANCELLED (scancel / SIGTERM)"));
}

TEST(Faults, HeartbeatRealDeath) {
  const SimRun r = Make("  - kind: heartbeat\n    step: 30\n    tasks: [1]\n    real_death: true\n    timeout_s: 600\n");
  EXPECT_TRUE(Has(r, "/job:jax_worker/replica:0/task:1\n"));
  EXPECT_FALSE(Has(r, "\n1: E0101"));  // the dead task logs nothing
  EXPECT_TRUE(Has(r, "NODE_EXIT host=gpu02 exit=137"));
  const MetricsModel m(r.s, r.tl);
  EXPECT_EQ(m.ActivityAt(1, r.tl.heartbeat_stop + 10), Activity::kIdle);
  EXPECT_EQ(m.ActivityAt(0, r.tl.heartbeat_stop + 10), Activity::kBusyWait);
}

TEST(Faults, ThermalThrottling) {
  const SimRun r = Make("  - kind: thermal\n    hosts: [gpu02]\n    gpus: [5]\n    steps: [40, 60]\n    tgs_factor: 0.8\n");
  EXPECT_NEAR(r.tl.steps[50].tgs / r.tl.steps[30].tgs, 0.8, 0.02);
  const MetricsModel m(r.s, r.tl);
  const double t = (r.tl.StepStart(45) + r.tl.StepEnd(45)) / 2;
  for (const auto& sr : m.series()) {
    if (sr.family != Family::kGpuTemp || sr.host != 1) continue;
    const double temp = m.Gauge(sr, t, 1);
    if (sr.gpu == 5) EXPECT_GT(temp, 100);
    else EXPECT_LT(temp, 80);
  }
}

}  // namespace
}  // namespace mt::launch::sim
