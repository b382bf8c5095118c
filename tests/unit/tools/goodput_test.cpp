// Goodput of a restarted run, on two small logs written for the rule: every second of the
// wall time is accounted for, and each part is the one the header of goodput.h defines.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <string>

#include "tools/logs/log_scanner.h"
#include "tools/perf/goodput.h"

namespace mt::tools {
namespace {

std::string At(int seconds_after_ten) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "2026-03-01 10:%02d:%02d,000", seconds_after_ten / 60, seconds_after_ten % 60);
  return buf;
}

std::string StepLine(int t, int step, double seconds) {
  return At(t) + " - INFO - completed step: " + std::to_string(step) + ", seconds: " + std::to_string(seconds) +
         ", TFLOP/s/device: 900.0, MFU: 36.00%, Tokens/s/device: 3290.5, loss: 7.1\n";
}

ChainAttempt Attempt(const std::string& job, int n, const LogScan* scan, std::optional<int64_t> resume, const std::string& cls,
                     const std::string& status) {
  ChainAttempt a;
  a.job = job;
  a.attempt = n;
  a.scan = scan;
  a.resume_step = resume;
  a.cls = cls;
  a.status = status;
  return a;
}

LogScan Scan(const std::string& text) {
  LogScanner s(1772359200 + 86400);   // 2026-03-02: resolves nothing here (the stamps carry their year)
  s.Feed(text.data(), text.size(), true);
  return s.Result();
}

// Attempt 0: starts at 0 s, first step (compiling) at 10 s, a checkpoint at step 4 costs 3 s,
// steps every 2 s to step 12 at 35 s, then silence until the watch's cancel at 65 s.
// Attempt 1: running from 85 s, it restores step 4 and runs steps 5..20, then ends at 123 s.
struct TwoAttempts {
  LogScan a, b;
  TwoAttempts() {
    std::string first = At(0) + " - INFO - Job start\n" + StepLine(10, 1, 4) + StepLine(12, 2, 2) + StepLine(14, 3, 2) +
                        StepLine(19, 4, 5) + At(19) + " - INFO - Saved a checkpoint at step 4\n";
    for (int step = 5; step <= 12; ++step) first += StepLine(21 + 2 * (step - 5), step, 2);
    first += At(65) + " - INFO - received SIGTERM\n";
    std::string second = At(85) + " - INFO - Job start\n" + At(86) + " - INFO - Restored checkpoint from step 4\n" +
                         StepLine(91, 5, 3);
    for (int step = 6; step <= 20; ++step) second += StepLine(91 + 2 * (step - 5), step, 2);
    second += At(123) + " - INFO - Job end: exit code 0\n";
    a = Scan(first);
    b = Scan(second);
  }
};


TEST(Goodput, EverySecondOfARestartedRunHasItsPlace) {
  const TwoAttempts run;
  const LogScan &sa = run.a, &sb = run.b;
  const int64_t base = sa.first_time;
  ASSERT_NE(base, kNoTime);
  // Its restart plan asked for at 65 s (the cancel), approved at 80 s.
  ChainAttempt first = Attempt("41", 0, &sa, std::nullopt, "hang", "cancelled");
  ChainAttempt second = Attempt("42", 1, &sb, 4, "completed", "completed");
  second.requested = base + 65;
  second.decided = base + 80;
  second.approved_via = "terminal";
  const GoodputView g = ComputeGoodput({first, second});

  ASSERT_GT(g.total_seconds, 0);
  EXPECT_DOUBLE_EQ(g.total_seconds, 123);
  EXPECT_DOUBLE_EQ(g.productive_seconds, 8 + 32);    // kept steps 1-4 and 5-20 at the median 2 s
  EXPECT_DOUBLE_EQ(g.startup_seconds, 8 + 4);        // (10-4)+(4-2), then (91-85-3)+(3-2)
  EXPECT_DOUBLE_EQ(g.checkpoint_seconds, 3);
  EXPECT_EQ(g.redone_steps, 8);                      // 5..12, done again after the restore
  EXPECT_DOUBLE_EQ(g.redone_seconds, 16);
  EXPECT_DOUBLE_EQ(g.failure_seconds, 30);           // 35 s → 65 s
  EXPECT_DOUBLE_EQ(g.approval_seconds, 15);
  EXPECT_DOUBLE_EQ(g.restart_seconds, 5);
  EXPECT_DOUBLE_EQ(g.other_seconds, 2);              // the last attempt's teardown
  EXPECT_NEAR(g.goodput_pct, 100.0 * 40 / 123, 1e-9);
  EXPECT_EQ(g.interruptions, 1);
  ASSERT_EQ(g.attempts.size(), 2u);
  EXPECT_EQ(g.attempts[0].kept_through, 4);
  EXPECT_EQ(g.attempts[0].redone_steps, 8);
  EXPECT_FALSE(g.attempts[1].kept_through.has_value());
  EXPECT_EQ(g.attempts[1].approval_wait_seconds, 15);
  EXPECT_TRUE(g.notes.empty());
}

// The restart asked for while the job still hung (at 50 s), approved at 80 s: the wait is the
// approval's, both the part during the hang and the part between the attempts.
TEST(Goodput, ARestartWaitingForAHumanWhileTheJobHangsIsApprovalTimeNotFailureTime) {
  const TwoAttempts run;
  const int64_t base = run.a.first_time;
  ChainAttempt second = Attempt("42", 1, &run.b, 4, "completed", "completed");
  second.requested = base + 50;
  second.decided = base + 80;
  const GoodputView g = ComputeGoodput({Attempt("41", 0, &run.a, std::nullopt, "hang", "cancelled"), second});
  EXPECT_DOUBLE_EQ(g.failure_seconds, 15);     // 35 s → 50 s
  EXPECT_DOUBLE_EQ(g.approval_seconds, 30);    // 50 s → 65 s during the hang, 65 s → 80 s after
  EXPECT_DOUBLE_EQ(g.restart_seconds, 5);
  EXPECT_DOUBLE_EQ(g.other_seconds, 2);
}

TEST(Goodput, ARestartFromScratchRedoesEverythingAndAMissingLogIsANoteNotATime) {
  std::string a = At(0) + " - INFO - Job start\n";
  for (int step = 1; step <= 6; ++step) a += StepLine(2 * step, step, 2);
  a += At(20) + " - ERROR - NCCL error: remote process exited\n";
  const LogScan sa = Scan(a);
  ChainAttempt first = Attempt("7", 0, &sa, std::nullopt, "nccl_error", "failed");
  ChainAttempt second = Attempt("8", 1, nullptr, std::nullopt, "", "");   // queued: no log yet
  const GoodputView g = ComputeGoodput({first, second});
  ASSERT_GT(g.total_seconds, 0);
  EXPECT_EQ(g.redone_steps, 6);
  EXPECT_DOUBLE_EQ(g.productive_seconds, 0);
  EXPECT_DOUBLE_EQ(g.goodput_pct, 0);
  EXPECT_EQ(g.attempts[0].kept_through, -1);
  ASSERT_EQ(g.notes.size(), 1u);
  EXPECT_NE(g.notes[0].find("job 8: no log yet"), std::string::npos);
}

TEST(Goodput, LogsWithoutClocksSayWhatIsMissing) {
  const LogScan sa = Scan("completed step: 1, seconds: 2.0\ncompleted step: 2, seconds: 2.0\n");
  const GoodputView g = ComputeGoodput({Attempt("1", 0, &sa, std::nullopt, "unknown", "unknown"), Attempt("2", 1, &sa, 1, "", "")});
  EXPECT_EQ(g.total_seconds, 0);
  EXPECT_FALSE(g.notes.empty());
}

}  // namespace
}  // namespace mt::tools
