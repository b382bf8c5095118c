// The scenario engine: turns a Scenario into a timeline of stages, completed steps and the
// way the job ends. The log writer, the TFEvent writer and the metrics model all read the
// same Timeline, so the three views of one job always agree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "launcher/sim/scenario.h"

namespace mt::launch::sim {

struct StepRecord {
  int64_t step = 0;
  double start = 0, end = 0;  // wall-clock interval of this step
  double seconds = 0;         // as printed (end - start)
  double tgs = 0;             // Tokens/s/device
  double tflops = 0;          // TFLOP/s/device
  double mfu = 0;             // percent
  double loss = 0;
  double moe_lb_loss = 0;
  double grad_norm = 0, raw_grad_norm = 0, param_norm = 0, learning_rate = 0;
  bool checkpoint_after = false;  // "Saved a checkpoint at step N" follows this step
};

enum class Outcome { kCompleted, kRunning, kHanging, kFailed, kCancelled };

struct Timeline {
  // Stage boundaries (absolute seconds).
  double job_start = 0;
  double preflight_begin = 0, preflight_end = 0;
  double pull_begin = 0, pull_end = 0;
  double ecc_begin = 0, ecc_end = 0;
  double train_begin = 0;
  double memstats = 0;      // "Memstats: After params initialized"
  double restore_end = 0;   // == memstats for a fresh run
  std::vector<StepRecord> steps;

  double busy_wait_start = -1;  // GPUs spin in collectives from here on (hang, NCCL timeout)
  double crash_time = -1;       // the fatal event (OOM, timeout, heartbeat, node death, signal)
  double heartbeat_stop = -1;   // heartbeat faults: crash_time - timeout
  double node_death = -1;       // node_fail: when the failed host stopped
  double train_end = 0;         // "== Training END/FAILED ==" (or end of data when still running)
  double job_end = 0;           // JOB SUMMARY (or the last log write when there is none)
  double metrics_start = 0, metrics_end = 0;

  Outcome outcome = Outcome::kCompleted;
  bool has_summary = true;
  int exit_code = 0;
  std::string stage_failure;    // "Training FAILED (exit=1)" / "CANCELLED (scancel / SIGTERM)"

  // Index into `steps` of the step running (or just finished) at time t; -1 before the first.
  int64_t StepIndexAt(double t) const;
  // Step number running at time t, or -1.
  int64_t StepAt(double t) const;
  // Absolute time at which `step` started, or -1 when it never ran.
  double StepStart(int64_t step) const;
  double StepEnd(int64_t step) const;
};

// Relative slowdown of `step` caused by the scenario's faults (1 = healthy).
double TgsFactor(const Scenario& s, int64_t step);

// Deterministic: the same scenario always gives the same timeline.
Timeline BuildTimeline(const Scenario& s);

}  // namespace mt::launch::sim
