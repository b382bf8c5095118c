// StepClockFromLog: the wall time of every training step from the log alone (a central
// store has no tb_step), from the step lines' own stamps, or their durations anchored at a
// later stamp or at the job's end, and the source named.
#include "tools/logs/step_clock.h"

#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

using mt::tools::testing::Iso;

namespace mt::tools {
namespace {

LogScan Scan(const std::string& text) {
  LogScanner s(Iso("2026-03-01T00:00:00Z"));
  s.Feed(text.data(), text.size(), true);
  return s.Result();
}

std::string Step(int i, double seconds, const std::string& stamp = "") {
  return (stamp.empty() ? "" : stamp + " ") + "0: completed step: " + std::to_string(i) + ", seconds: " +
         std::to_string(seconds) + ", TFLOP/s/device: 900.0, Tokens/s/device: 3290.5, total_weights: 1, loss: 7.1\n";
}

TEST(StepClock, UnstampedStepsStartAfterTheJobsStartAndTheStagesTheLogTimed) {
  // A hang: the last step is long before the job's end, so the end is no anchor.
  std::string log = "== Preflight BEGIN (timeout=900s) ==\n== Preflight END (42s) ==\n== Docker pull BEGIN (timeout=900s) ==\n"
                    "== Docker pull END (41s) ==\n== Training BEGIN (no timeout) ==\n";
  for (int i = 0; i < 10; ++i) log += Step(i, i == 0 ? 100 : i < 5 ? 10 : 20);
  const double start = static_cast<double>(Iso("2026-02-10T10:00:00Z")), end = start + 86400;
  StepClock c = StepClockFromLog(Scan(log), start, end, "the scheduler");
  ASSERT_EQ(c.steps.size(), 10u);
  EXPECT_EQ(c.steps[0].time, start + 42 + 41 + 100);   // stages, then step 0's own time (compilation)
  EXPECT_EQ(c.steps[9].time - c.steps[8].time, 20);
  EXPECT_EQ(c.steps[4].time - c.steps[3].time, 10);
  EXPECT_NE(c.source.find("from the job's start (the scheduler) and the stages"), std::string::npos) << c.source;
  // a hang ended by the time limit: its CANCELLED stamp is hours after the last step, and the
  // start still anchors
  StepClock hung = StepClockFromLog(Scan(log + "slurmstepd: error: *** JOB 7 ON n1 CANCELLED AT 2026-02-11T10:00:00 DUE TO TIME LIMIT ***\n"),
                                    start, end, "the scheduler");
  ASSERT_EQ(hung.steps.size(), 10u);
  EXPECT_EQ(hung.steps[0].time, start + 42 + 41 + 100);
}

TEST(StepClock, WithoutAStartTheEndAnchorsAndWithoutEitherThereIsNoClock) {
  std::string log;
  for (int i = 0; i < 10; ++i) log += Step(i, i < 5 ? 10 : 20);
  const double end = static_cast<double>(Iso("2026-02-10T12:00:00Z"));
  StepClock c = StepClockFromLog(Scan(log), std::nullopt, end, "arguments");
  ASSERT_EQ(c.steps.size(), 10u);
  EXPECT_EQ(c.steps.back().time, end);
  EXPECT_EQ(c.steps[9].time - c.steps[8].time, 20);
  EXPECT_NE(c.source.find("anchored at the job's end (arguments)"), std::string::npos) << c.source;
  // nothing to anchor them: no clock rather than a made-up one
  EXPECT_TRUE(StepClockFromLog(Scan(log), std::nullopt, std::nullopt, "").steps.empty());
}

TEST(StepClock, ALaterStampInTheLogBeatsTheJobsEndWhenItsStartIsUnknown) {
  std::string log;
  for (int i = 0; i < 4; ++i) log += Step(i, 30);
  log += "2026-02-10 11:00:00 INFO training finished\n";
  StepClock c = StepClockFromLog(Scan(log), std::nullopt, static_cast<double>(Iso("2026-02-10T12:00:00Z")), "the scheduler");
  ASSERT_EQ(c.steps.size(), 4u);
  EXPECT_EQ(c.steps.back().time, static_cast<double>(Iso("2026-02-10T11:00:00Z")));
  EXPECT_EQ(c.steps.front().time, static_cast<double>(Iso("2026-02-10T10:58:30Z")));
  EXPECT_NE(c.source.find("last time stamp"), std::string::npos) << c.source;
}

TEST(StepClock, StampedStepLinesAreTakenAsTheyAreAndGapsFilledByDurations) {
  std::string log = Step(0, 10, "2026-02-10 10:00:00") + Step(1, 10) + Step(2, 10) + Step(3, 10, "2026-02-10 10:05:00") + Step(4, 10);
  StepClock c = StepClockFromLog(Scan(log), std::nullopt, std::nullopt, "");
  ASSERT_EQ(c.steps.size(), 5u);
  EXPECT_EQ(c.steps[0].time, static_cast<double>(Iso("2026-02-10T10:00:00Z")));
  EXPECT_EQ(c.steps[2].time, static_cast<double>(Iso("2026-02-10T10:00:20Z")));
  EXPECT_EQ(c.steps[3].time, static_cast<double>(Iso("2026-02-10T10:05:00Z")));   // the stamp, not the durations
  EXPECT_EQ(c.steps[4].time, static_cast<double>(Iso("2026-02-10T10:05:10Z")));
  EXPECT_NE(c.source.find("time stamps"), std::string::npos) << c.source;
}

}  // namespace
}  // namespace mt::tools
