// The general rules of triage, each on small logs written for the rule (not copies of any
// corpus case): the log's own clock, where the job is in its life, and which evidence is
// the root cause.
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"
#include "tools/logs/log_clock.h"
#include "tools/logs/triage.h"
#include "tools/logs/workspace.h"

namespace mt::tools {
namespace {

using testing::Iso;
using testing::TempDir;
using testing::WriteFile;

// Step lines in Python-logging layout, one every `every` seconds from `start`.
std::string Steps(int from, int to, int64_t start, int every = 5) {
  std::string s;
  for (int i = from; i <= to; ++i) {
    std::string t = FormatIso8601(start + static_cast<int64_t>(i - from) * every);
    t[10] = ' ';
    t.pop_back();   // "2026-03-01 10:00:05"
    s += t + ",000 - INFO - completed step: " + std::to_string(i) +
         ", seconds: 5.0, TFLOP/s/device: 900.0, MFU: 36.00%, Tokens/s/device: 3290.5, loss: 7.1\n";
  }
  return s;
}

class TriageRules : public ::testing::Test {
 protected:
  // Writes `text` as a log whose mtime is `mtime` (a copy's: often long after its content)
  // and triages it at `now`.
  Json Triage(const std::string& text, const std::string& now, const std::string& mtime = "2030-01-01T00:00:00Z") {
    const auto p = dir_.path() / ("case" + std::to_string(++n_) + ".log");
    WriteFile(p, text);
    testing::SetMtime(p, Iso(mtime));
    TriageOptions o;
    o.now = Iso(now);
    return TriageJob(DescribeLogFile(p), o, cache_);
  }
  static bool Has(const Json& list, const std::string& v) {
    return std::find(list.begin(), list.end(), Json(v)) != list.end();
  }
  TempDir dir_;
  ScanCache cache_;
  int n_ = 0;
};

TEST(LogClockStamps, ReadsTheCommonLayoutsAndRejectsClocksThatAreNotTimes) {
  struct Case {
    const char* line;
    const char* layout;
    int year, month, day, hour, minute, second;
  };
  const Case cases[] = {
      {"2026-03-01T10:00:05Z step", "iso", 2026, 3, 1, 10, 0, 5},
      {"[2026-03-01 10:00:05,123][1234] msg", "iso", 2026, 3, 1, 10, 0, 5},
      {"2026/03/01 10:00:05 msg", "iso", 2026, 3, 1, 10, 0, 5},
      {"Job start: Sun Mar  1 10:00:05 UTC 2026", "date", 2026, 3, 1, 10, 0, 5},
      {"I0301 10:00:05.531340 140 train.py:1] m", "absl", 0, 3, 1, 10, 0, 5},
      {"Mar 01 10:00:05 host kernel: x", "journal", 0, 3, 1, 10, 0, 5},
      {"10:00:05 Progress on:train", "time", 0, 0, 0, 10, 0, 5},
  };
  for (const auto& c : cases) {
    auto s = FindStamp(c.line);
    ASSERT_TRUE(s) << c.line;
    EXPECT_STREQ(s->layout, c.layout) << c.line;
    EXPECT_EQ(s->year, c.year) << c.line;
    EXPECT_EQ(s->month, c.month) << c.line;
    EXPECT_EQ(s->day, c.day) << c.line;
    EXPECT_EQ(s->hour * 3600 + s->minute * 60 + s->second, c.hour * 3600 + c.minute * 60 + c.second) << c.line;
  }
  EXPECT_FALSE(FindStamp(" 45%|####      | 90/200 [28:51<35:16,  1.2it/s]"));
  EXPECT_FALSE(FindStamp("[ 1843.430211] NVRM: something"));
  EXPECT_FALSE(FindStamp("step time 10:00:05 is not at the start of anything we know"));
}

TEST(LogClockStamps, FillsYearAndDateFromTheLastDatedStampAndRollsOverMidnight) {
  LogClock c(Iso("2031-06-01T00:00:00Z"));   // a copy's mtime, years later
  EXPECT_EQ(c.Resolve(*FindStamp("Job start: Thu Dec 31 23:59:00 UTC 2026")), Iso("2026-12-31T23:59:00Z"));
  EXPECT_EQ(c.Resolve(*FindStamp("23:59:30 still the old day")), Iso("2026-12-31T23:59:30Z"));
  EXPECT_EQ(c.Resolve(*FindStamp("00:00:10 after midnight")), Iso("2027-01-01T00:00:10Z"));
  EXPECT_EQ(c.Resolve(*FindStamp("I0101 00:01:00.000 1 x.py:1] m")), Iso("2027-01-01T00:01:00Z"));
  EXPECT_TRUE(c.anchored());
}

TEST_F(TriageRules, LivenessComesFromTheLogsOwnClockNotACopysMtime) {
  const std::string log = Steps(1, 50, Iso("2026-03-01T10:00:00Z"));
  // Two hours of silence after the last stamped step: a hang, whatever the mtime says.
  Json hung = Triage(log, "2026-03-01T12:10:00Z");
  EXPECT_EQ(hung["class"], "hang") << hung.dump(1);
  EXPECT_EQ(hung["clock"]["source"], "log_timestamp");
  EXPECT_EQ(hung["progress"]["last_progress_time"], "2026-03-01T10:04:05Z");
  // A minute after the last step: running.
  Json live = Triage(log, "2026-03-01T10:05:00Z");
  EXPECT_EQ(live["class"], "running") << live.dump(1);
  EXPECT_EQ(live["hang"]["silent_seconds"], 55);
}

TEST_F(TriageRules, NoStampsAndAMtimeAfterNowIsUnknownWithWhatWouldDecideIt) {
  std::string log;
  for (int i = 1; i <= 30; ++i) log += "completed step: " + std::to_string(i) + ", seconds: 5.0, loss: 7.1\n";
  Json t = Triage(log, "2026-03-01T12:00:00Z", "2030-01-01T00:00:00Z");
  EXPECT_EQ(t["class"], "unknown") << t.dump(1);
  EXPECT_EQ(t["status"], "unknown");
  EXPECT_EQ(t["clock"]["source"], "none");
  ASSERT_TRUE(t["undecided"].is_string());
  EXPECT_NE(t["undecided"].get<std::string>().find("now"), std::string::npos);
  // The same log with an mtime before `now` is measured on the mtime.
  Json m = Triage(log, "2026-03-01T12:00:00Z", "2026-03-01T11:59:00Z");
  EXPECT_EQ(m["clock"]["source"], "file_mtime");
  EXPECT_EQ(m["class"], "running");
}

TEST_F(TriageRules, ALaunchersOwnEndLineEndsTheJob) {
  const std::string steps = Steps(1, 20, Iso("2026-03-01T10:00:00Z"));
  Json ok = Triage(steps + "Job end: Sun Mar  1 10:02:00 UTC 2026 (exit code 0)\n", "2026-03-01T14:00:00Z");
  EXPECT_EQ(ok["class"], "completed") << ok.dump(1);
  EXPECT_EQ(ok["lifecycle"]["end_source"], "launcher_end_line");
  EXPECT_EQ(ok["lifecycle"]["exit_code"], 0);
  EXPECT_EQ(ok["hang"]["measured_until"], "job end");
  Json bad = Triage(steps + "rc=3\n", "2026-03-01T14:00:00Z");
  EXPECT_EQ(bad["status"], "failed") << bad.dump(1);
  EXPECT_EQ(bad["exit_code"], 3);
  EXPECT_NE(bad["class"], "hang");
}

TEST_F(TriageRules, ExitZeroDoesNotHideAFatalErrorAfterWhichNothingProgressed) {
  const std::string log = Steps(1, 20, Iso("2026-03-01T10:00:00Z")) +
                          "2026-03-01 10:01:50,000 - ERROR - NCCL WARN NET/IB : Got completion with error 12\n"
                          "EXIT_CODE=0\n";
  Json t = Triage(log, "2026-03-01T11:00:00Z");
  EXPECT_EQ(t["status"], "failed") << t.dump(1);
  EXPECT_EQ(t["class"], "nccl_error");
}

TEST_F(TriageRules, TheFirstFatalEventExplainsTheOnesAfterIt) {
  const std::string steps = Steps(1, 20, Iso("2026-03-01T10:00:00Z"));
  const std::string tb =
      "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    main()\n"
      "ValueError: bad batch\n";
  // A signal, then the traceback it caused: cancelled.
  Json sig = Triage(steps + "srun: Received 1 death signal, shutting down workers\n" + tb, "2026-03-01T11:00:00Z");
  EXPECT_EQ(sig["class"], "cancelled") << sig.dump(1);
  EXPECT_EQ(sig["root_cause_rule"].get<std::string>().rfind("first fatal event", 0), 0u);
  // The traceback, then the operator's scancel: the exception.
  Json exc = Triage(steps + tb +
                        "slurmstepd: error: *** JOB 77 ON node1 CANCELLED AT 2026-03-01T10:05:00 ***\n",
                    "2026-03-01T11:00:00Z");
  EXPECT_EQ(exc["class"], "python_exception") << exc.dump(1);
}

TEST_F(TriageRules, AMemoryReportExplainsEarlierCollectiveErrors) {
  // The peers' NCCL errors are printed before the node's OOM report arrives.
  const std::string log = Steps(1, 20, Iso("2026-03-01T10:00:00Z")) +
                          "2026-03-01 10:01:41,000 - ERROR - NCCL WARN NET/IB : Got completion with error 12\n"
                          "2026-03-01 10:01:43,000 - ERROR - slurmstepd: error: Detected 1 oom-kill event(s) in StepId=7.0\n";
  Json t = Triage(log, "2026-03-01T11:00:00Z");
  EXPECT_EQ(t["class"], "host_oom") << t.dump(1);
  EXPECT_TRUE(Has(t["secondary"], "nccl_error"));
}

TEST_F(TriageRules, ATracebackThatCarriesAnotherClassIsThatClass) {
  const std::string log = Steps(1, 20, Iso("2026-03-01T10:00:00Z")) +
                          "Traceback (most recent call last):\n  File \"train.py\", line 9, in step\n"
                          "    dist.all_reduce(t)\n"
                          "RuntimeError: NCCL error: remote process exited. NCCL WARN NET/IB : Got completion with error 12\n";
  Json t = Triage(log, "2026-03-01T11:00:00Z");
  EXPECT_EQ(t["class"], "nccl_error") << t.dump(1);
  EXPECT_FALSE(Has(t["secondary"], "python_exception"));
}

// C++'s uncaught-exception report is a traceback too: its "what():" message decides, and the
// SIGABRT that follows ("Aborted (core dumped)", however the launcher words it) says only how
// the process died. Unprefixed, as ranks sharing one log print it, and rank-prefixed.
TEST_F(TriageRules, AnUncaughtCppExceptionIsTheClassOfItsMessageAndItsAbortFollowsIt) {
  const std::string steps = Steps(1, 20, Iso("2026-03-01T10:00:00Z"));
  const std::string peer_lost =
      "terminate called after throwing an instance of 'gloo::IoException'\n"
      "  what():  [../third_party/gloo/gloo/transport/tcp/pair.cc:589] Read error [10.0.0.7]:4242: Connection reset by peer\n";
  Json lost = Triage(steps + peer_lost + "run.sh: line 12: 4711 Aborted                 (core dumped) python train.py\n",
                     "2026-03-01T11:00:00Z");
  EXPECT_EQ(lost["class"], "nccl_error") << lost.dump(1);
  EXPECT_FALSE(Has(lost["secondary"], "python_exception")) << lost.dump(1);
  Json prefixed = Triage(steps + "1: terminate called after throwing an instance of 'gloo::IoException'\n"
                                 "0: 2026-03-01 10:01:41,000 - INFO - waiting\n"
                                 "1:   what():  [pair.cc:598] Connection closed by peer [10.0.0.7]:4242\n"
                                 "srun: error: node3: task 1: Aborted (core dumped)\n",
                         "2026-03-01T11:00:00Z");
  EXPECT_EQ(prefixed["class"], "nccl_error") << prefixed.dump(1);
  // A message that is no other class's evidence is the program's own failure, and so is a
  // terminate without one; the abort stays evidence of it.
  for (const std::string& report :
       {std::string("terminate called after throwing an instance of 'std::runtime_error'\n  what():  bad shard index 7\n"),
        std::string("terminate called without an active exception\n")}) {
    Json own = Triage(steps + report + "Aborted (core dumped)\n", "2026-03-01T11:00:00Z");
    EXPECT_EQ(own["class"], "python_exception") << own.dump(1);
  }
  // An abort that no C++ report announced is not explained away by a peer's lost connection.
  Json bare = Triage(steps + "RuntimeError: [pair.cc:598] Connection closed by peer [10.0.0.7]:4242\n"
                             "Aborted (core dumped)\n",
                     "2026-03-01T11:00:00Z");
  EXPECT_EQ(bare["class"], "python_exception") << bare.dump(1);
}

TEST_F(TriageRules, AnExceptionAmongTheLastLinesWithoutItsTracebackHeader) {
  const std::string log = Steps(1, 5, Iso("2026-03-01T10:00:00Z")) +
                          "    import flash_attn\nModuleNotFoundError: No module named 'flash_attn'\n";
  Json t = Triage(log, "2026-03-01T11:00:00Z");
  EXPECT_EQ(t["class"], "python_exception") << t.dump(1);
  EXPECT_EQ(t["status"], "failed");
}

TEST_F(TriageRules, AProgressCounterAtItsTotalIsTheEndOfTraining) {
  std::string done = "10:00:00 start\n";
  for (int i = 190; i <= 200; ++i)
    done += "10:00:" + std::to_string(i - 150) + " train: " + std::to_string(i) + "/200 [05:00<00:00,  1.2it/s]\n";
  Json t = Triage(done, "2026-03-01T11:00:00Z");
  EXPECT_EQ(t["class"], "completed") << t.dump(1);
  EXPECT_TRUE(t["lifecycle"]["training_finished"].get<bool>());
  // An epoch's counter reaches its total at every epoch's end: not the end of training.
  std::string epoch = "2026-03-01 10:00:00,000 start\n2026-03-01 10:00:10,000 Epoch 2: 100%|##########| 50/50 [00:10<00:00, 5.0it/s]\n";
  Json e = Triage(epoch, "2026-03-01T12:00:00Z");
  EXPECT_FALSE(e["lifecycle"]["training_finished"].get<bool>()) << e.dump(1);
  EXPECT_EQ(e["class"], "hang");
}

TEST_F(TriageRules, AStepCounterThatCountsFromOneEndsAtItsTotalNotOneBefore) {
  // "step k/N" from 1 (the torch lab, HF-style loggers): step N-1 of N is still running.
  std::string running;
  for (int i = 6; i <= 13; ++i)
    running += "2026-03-01 10:00:" + std::to_string(10 + i) + ",000 INFO train: step " + std::to_string(i) + "/14 loss 1.0\n";
  Json r = Triage(running, "2026-03-01T10:00:24Z");
  EXPECT_EQ(r["status"], "running") << r.dump(1);
  EXPECT_FALSE(r["lifecycle"]["training_finished"].get<bool>());
  Json done = Triage(running + "2026-03-01 10:00:24,000 INFO train: step 14/14 loss 1.0\n", "2026-03-01T10:00:25Z");
  EXPECT_TRUE(done["lifecycle"]["training_finished"].get<bool>()) << done.dump(1);
  // The same lines counting from 0 end one step before their total.
  std::string zero;
  for (int i = 0; i <= 13; ++i)
    zero += "2026-03-01 10:00:" + std::to_string(10 + i) + ",000 INFO train: step " + std::to_string(i) + "/14 loss 1.0\n";
  Json z = Triage(zero, "2026-03-01T10:00:24Z");
  EXPECT_TRUE(z["lifecycle"]["training_finished"].get<bool>()) << z.dump(1);
}

TEST_F(TriageRules, SilenceBeforeAnOutsideEndIsAHangButACollectiveTimeoutNamesIt) {
  const std::string steps = Steps(1, 20, Iso("2026-03-01T10:00:00Z"));
  Json cancelled = Triage(steps + "slurmstepd: error: *** JOB 77 ON node1 CANCELLED AT 2026-03-01T12:00:00 ***\n",
                          "2026-03-01T13:00:00Z");
  EXPECT_EQ(cancelled["class"], "hang") << cancelled.dump(1);
  EXPECT_TRUE(Has(cancelled["secondary"], "cancelled"));
  Json quick = Triage(steps + "slurmstepd: error: *** JOB 77 ON node1 CANCELLED AT 2026-03-01T10:02:00 ***\n",
                      "2026-03-01T13:00:00Z");
  EXPECT_EQ(quick["class"], "cancelled") << quick.dump(1);
  Json nccl = Triage(steps + "2026-03-01 10:31:40,000 - ERROR - NCCL WARN NET/IB : Got completion with error 12\n",
                     "2026-03-01T13:00:00Z");
  EXPECT_EQ(nccl["class"], "nccl_error") << nccl.dump(1);
}

TEST_F(TriageRules, OtherSchedulersAndLaunchersEndTheJobInTheirOwnWords) {
  const std::string steps = Steps(1, 20, Iso("2026-03-01T10:00:00Z"));
  // IBM LSF's job report after the output.
  Json lsf = Triage(steps + "\n------------------------------------------------------------\n\n"
                            "TERM_RUNLIMIT: job killed after reaching LSF run time limit.\nExited with exit code 140.\n\n"
                            "Resource usage summary:\n\n    CPU time :   100.00 sec.\n",
                    "2026-03-01T12:00:00Z");
  EXPECT_EQ(lsf["class"], "time_limit") << lsf.dump(1);
  EXPECT_EQ(lsf["lifecycle"]["exit_code"], 140);
  // The DeepSpeed launcher's per-process end.
  Json ds = Triage(steps + "[2026-03-01 10:01:50,000] [INFO] [launch.py:351:main] Process 4242 exits successfully.\n",
                   "2026-03-01T12:00:00Z");
  EXPECT_EQ(ds["class"], "completed") << ds.dump(1);
}

TEST_F(TriageRules, ASigkillIsOnlyACauseWhenNothingEndedTheJobBeforeIt) {
  const std::string steps = Steps(1, 20, Iso("2026-03-01T10:00:00Z"));
  Json alone = Triage(steps + "[2026-03-01 10:01:50,000] [ERROR] [launch.py:320:sigkill_handler] ['python', 'train.py'] "
                              "exits with return code = -9\n",
                      "2026-03-01T12:00:00Z");
  EXPECT_EQ(alone["class"], "host_oom") << alone.dump(1);
  EXPECT_EQ(alone["status"], "failed");
  Json cancelled = Triage(steps + "slurmstepd: error: *** STEP 9.0 ON n1 CANCELLED AT 2026-03-01T10:01:50 ***\n"
                                  "srun: error: n1: task 0: Killed\n",
                          "2026-03-01T12:00:00Z");
  EXPECT_EQ(cancelled["class"], "cancelled") << cancelled.dump(1);
  // The kernel's own report is proof, whatever came first.
  Json kernel = Triage(steps + "slurmstepd: error: *** STEP 9.0 ON n1 CANCELLED AT 2026-03-01T10:01:50 ***\n"
                               "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=9.0. Some of your processes may "
                               "have been killed by the cgroup out-of-memory handler.\n",
                       "2026-03-01T12:00:00Z");
  EXPECT_EQ(kernel["class"], "host_oom") << kernel.dump(1);
}

}  // namespace
}  // namespace mt::tools
