#include "launcher/sim/timeline.h"

#include <algorithm>
#include <cmath>

#include "launcher/sim/noise.h"

namespace mt::launch::sim {
namespace {

constexpr uint64_t kStreamStep = 11, kStreamLoss = 12, kStreamStage = 13, kStreamNorm = 14;

double RangedFactor(const Fault& f, double base_tgs, int64_t step) {
  if (step < f.step || (f.end_step >= 0 && step > f.end_step)) return 1.0;
  const double full = f.tgs > 0 ? f.tgs / base_tgs : f.tgs_factor;
  if (f.ramp_steps <= 0) return full;
  const double k = std::min(1.0, static_cast<double>(step - f.step + 1) / (f.ramp_steps + 1));
  return 1.0 - (1.0 - full) * k;
}

double LearningRate(int64_t step, int64_t total) {
  const double peak = 3e-4;
  const int64_t warmup = std::max<int64_t>(1, std::min<int64_t>(2000, total / 10));
  if (step < warmup) return peak * static_cast<double>(step + 1) / static_cast<double>(warmup);
  const double p = static_cast<double>(step - warmup) / static_cast<double>(std::max<int64_t>(1, total - warmup));
  return 0.1 * peak + 0.9 * peak * 0.5 * (1 + std::cos(M_PI * std::min(1.0, p)));
}

}  // namespace

double TgsFactor(const Scenario& s, int64_t step) {
  double network = 1.0;  // the slowest link gates every collective: take the worst
  double other = 1.0;
  for (const auto& f : s.faults) {
    switch (f.kind) {
      case FaultKind::kRdmaRetransmits:
      case FaultKind::kThermal:
        network = std::min(network, RangedFactor(f, s.tgs, step));
        break;
      case FaultKind::kMoeLbSpike:
        if (step >= f.step) {
          const double k = std::min(1.0, static_cast<double>(step - f.step) / std::max<int64_t>(1, f.decline_steps));
          other *= 1.0 - (1.0 - f.decline_to) * k;
        }
        break;
      case FaultKind::kThreadLeak:
        other *= f.tgs_factor;
        break;
      default:
        break;
    }
  }
  return network * other;
}

int64_t Timeline::StepIndexAt(double t) const {
  if (steps.empty() || t < steps.front().start) return -1;
  auto it = std::upper_bound(steps.begin(), steps.end(), t,
                             [](double v, const StepRecord& r) { return v < r.start; });
  return static_cast<int64_t>(it - steps.begin()) - 1;
}

int64_t Timeline::StepAt(double t) const {
  const int64_t i = StepIndexAt(t);
  return i < 0 ? -1 : steps[static_cast<size_t>(i)].step;
}

double Timeline::StepStart(int64_t step) const {
  if (steps.empty() || step < steps.front().step || step > steps.back().step) return -1;
  return steps[static_cast<size_t>(step - steps.front().step)].start;
}

double Timeline::StepEnd(int64_t step) const {
  if (steps.empty() || step < steps.front().step || step > steps.back().step) return -1;
  return steps[static_cast<size_t>(step - steps.front().step)].end;
}

namespace {

// Stage durations grow a little with the node count, as srun fan-out does.
void PlaceStages(const Scenario& s, Timeline& tl) {
  const uint64_t seed = s.seed;
  const double n = static_cast<double>(s.hosts.size());
  double t = 0;
  tl.job_start = t;
  tl.preflight_begin = t + 1;
  tl.preflight_end = tl.preflight_begin + 14 + 0.4 * n + 6 * Uniform(seed, kStreamStage, 0);
  tl.pull_begin = tl.preflight_end + 1;
  tl.pull_end = tl.pull_begin + 22 + 0.3 * n + 10 * Uniform(seed, kStreamStage, 1);
  tl.ecc_begin = tl.pull_end + 1;
  tl.ecc_end = tl.ecc_begin + 4 + 4 * Uniform(seed, kStreamStage, 2);
  tl.train_begin = tl.ecc_end + 1;
  tl.memstats = tl.train_begin + s.init_s;
  tl.restore_end = tl.memstats + (s.first_step > 0 ? s.restore_s : 0);
  tl.metrics_start = tl.train_begin + 8;
}

// The last fault of the scenario that stops training (nullptr when none does).
const Fault* TerminalFault(const Scenario& s) {
  const Fault* terminal = nullptr;
  for (const auto& f : s.faults) {
    switch (f.kind) {
      case FaultKind::kHang: case FaultKind::kOom: case FaultKind::kNcclTimeout: case FaultKind::kHeartbeat:
      case FaultKind::kNodeFail: case FaultKind::kCancel: case FaultKind::kTimeLimit:
        terminal = &f;
        break;
      default:
        break;
    }
  }
  return terminal;
}

// The last step that completes.
int64_t LastCompletedStep(const Scenario& s, const Fault* terminal) {
  int64_t last = s.LastPlannedStep();
  if (terminal) {
    switch (terminal->kind) {
      case FaultKind::kOom: case FaultKind::kNcclTimeout: case FaultKind::kNodeFail:
        last = std::min(last, terminal->step - 1);  // the fault hits during `step`
        break;
      default:
        last = std::min(last, terminal->step);      // the fault follows `step`
        break;
    }
  }
  return last;
}

// Loss, norms, learning rate and the MoE load-balancing loss of `step`.
void FillTrainingMetrics(const Scenario& s, int64_t step, int64_t lb_step, StepRecord& r) {
  const uint64_t seed = s.seed;
  const uint64_t i = static_cast<uint64_t>(step);
  const double tau = std::max(60.0, static_cast<double>(s.steps) * 0.15);
  r.loss = s.loss_end + (s.loss_start - s.loss_end) * std::exp(-static_cast<double>(step) / tau) +
           0.03 * Symmetric(seed, kStreamLoss, i);
  r.grad_norm = 0.25 + 1.5 * std::exp(-static_cast<double>(step) / tau) + 0.04 * Uniform(seed, kStreamNorm, i);
  r.raw_grad_norm = r.grad_norm * 1.07;
  r.param_norm = 1800 + 0.05 * static_cast<double>(step);
  r.learning_rate = LearningRate(step, s.steps);
  if (s.moe) {
    r.moe_lb_loss = 0.0101 + 0.0004 * Symmetric(seed, kStreamLoss + 1, i);
    if (lb_step >= 0 && step >= lb_step) {
      const Fault* f = s.Find(FaultKind::kMoeLbSpike);
      const double since = static_cast<double>(step - lb_step);
      r.moe_lb_loss += (f->lb_peak - 0.0101) * std::exp(-since / 25.0) + 0.004 * (1 - std::exp(-since / 25.0));
    }
  }
}

// The steps from s.first_step to `last`, back to back from the end of the restore.
void PlaceSteps(const Scenario& s, int64_t last, Timeline& tl) {
  const uint64_t seed = s.seed;
  const double tokens = static_cast<double>(s.per_device_batch_size) * s.max_target_length;
  const double peak = s.PeakTflops();
  double t = tl.restore_end;
  bool pending_checkpoint = false;
  const int64_t lb_step = s.Find(FaultKind::kMoeLbSpike) ? s.Find(FaultKind::kMoeLbSpike)->step : -1;
  for (int64_t step = s.first_step; step <= last; ++step) {
    StepRecord r;
    r.step = step;
    r.start = t;
    const uint64_t i = static_cast<uint64_t>(step);
    if (step == s.first_step) {
      r.seconds = s.compile_s * (1 + 0.02 * Symmetric(seed, kStreamStep, i));
    } else {
      const double tgs = s.tgs * TgsFactor(s, step) * (1 + s.tgs_noise * Symmetric(seed, kStreamStep, i));
      r.seconds = tokens / tgs;
      if (pending_checkpoint) r.seconds += s.checkpoint_save_s * (1 + 0.1 * Symmetric(seed, kStreamStep + 100, i));
    }
    pending_checkpoint = false;
    r.seconds = std::round(r.seconds * 1000) / 1000;  // printed with 3 decimals
    r.end = t + r.seconds;
    r.tgs = tokens / r.seconds;
    r.tflops = r.tgs * s.flops_per_token / 1e12;
    r.mfu = peak > 0 ? r.tflops / peak * 100 : 0;
    FillTrainingMetrics(s, step, lb_step, r);
    if (s.checkpoint_period > 0 && step % s.checkpoint_period == 0 && (s.first_step == 0 || step > s.first_step)) {
      r.checkpoint_after = true;
      pending_checkpoint = true;
    }
    tl.steps.push_back(r);
    t = r.end;
  }
}

void FinishFailed(Timeline& tl, double crash, int code, const std::string& why) {
  tl.crash_time = crash;
  tl.train_end = crash + 4;
  tl.job_end = tl.train_end + 2;
  tl.outcome = Outcome::kFailed;
  tl.exit_code = code;
  tl.stage_failure = why;
}

// No fault stops training: it still runs, or it completed.
void FinishWithoutFault(const Scenario& s, double last_end, Timeline& tl) {
  if (s.running) {
    tl.outcome = Outcome::kRunning;
    tl.has_summary = false;
    tl.train_end = last_end;
    tl.job_end = last_end;
  } else {
    tl.outcome = Outcome::kCompleted;
    tl.train_end = last_end + 12;
    tl.job_end = tl.train_end + 2;
  }
}

void FinishHang(const Fault& f, double last_end, Timeline& tl) {
  tl.busy_wait_start = last_end;
  if (f.then == "cancel") {
    tl.crash_time = last_end + f.duration_s;
    tl.train_end = tl.crash_time + 3;
    tl.job_end = tl.train_end + 1;
    tl.outcome = Outcome::kCancelled;
    tl.exit_code = 143;
    tl.stage_failure = "CANCELLED (scancel / SIGTERM)";
  } else {
    tl.outcome = Outcome::kHanging;
    tl.has_summary = false;
    tl.train_end = last_end + f.duration_s;
    tl.job_end = last_end;  // nothing is written to the log while it hangs
  }
}

void FinishHeartbeat(const Fault& f, double last_end, Timeline& tl) {
  if (f.real_death) {
    tl.heartbeat_stop = last_end + 5;
    tl.busy_wait_start = tl.heartbeat_stop;
    FinishFailed(tl, tl.heartbeat_stop + f.timeout_s, 134, "Training FAILED (exit=134)");
  } else {
    const double crash = last_end + f.crash_delay_s;
    tl.heartbeat_stop = crash - f.timeout_s;
    FinishFailed(tl, crash, 134, "Training FAILED (exit=134)");
  }
}

// How the fault `f` that stopped training ends the job.
void FinishAfterFault(const Scenario& s, const Fault& f, double last_end, Timeline& tl) {
  switch (f.kind) {
    case FaultKind::kHang:
      FinishHang(f, last_end, tl);
      break;
    case FaultKind::kOom: {
      // During compile when the fault names the first step; otherwise mid-step.
      const double crash = tl.steps.empty() ? tl.restore_end + s.compile_s * 0.55
                                            : last_end + 0.5 * tl.steps.back().seconds;
      FinishFailed(tl, crash, 1, "Training FAILED (exit=1)");
      break;
    }
    case FaultKind::kNcclTimeout:
      tl.busy_wait_start = last_end;
      FinishFailed(tl, last_end + f.timeout_s, 1, "Training FAILED (exit=1)");
      break;
    case FaultKind::kHeartbeat:
      FinishHeartbeat(f, last_end, tl);
      break;
    case FaultKind::kNodeFail: {
      const double step_s = tl.steps.empty() ? 10 : tl.steps.back().seconds;
      tl.node_death = last_end + 0.4 * step_s;
      FinishFailed(tl, tl.node_death + 3, f.exit_code, "Training FAILED (exit=" + std::to_string(f.exit_code) + ")");
      break;
    }
    case FaultKind::kCancel:
    case FaultKind::kTimeLimit:
      tl.crash_time = last_end + 0.3 * (tl.steps.empty() ? 10 : tl.steps.back().seconds);
      tl.train_end = tl.crash_time + 3;
      tl.job_end = tl.train_end + 1;
      tl.outcome = Outcome::kCancelled;
      tl.exit_code = 143;
      tl.stage_failure = "CANCELLED (scancel / SIGTERM)";
      break;
    default:
      break;
  }
}

// Place the whole timeline in absolute time.
void ShiftToAbsoluteTime(const Scenario& s, Timeline& tl) {
  double shift = s.start;
  if (s.has_anchor) {
    for (const auto& r : tl.steps)
      if (r.step == s.anchor_step) shift = s.anchor_time - r.end;
  }
  auto mv = [shift](double& v) {
    if (v >= 0) v += shift;
  };
  for (double* v : {&tl.job_start, &tl.preflight_begin, &tl.preflight_end, &tl.pull_begin, &tl.pull_end,
                    &tl.ecc_begin, &tl.ecc_end, &tl.train_begin, &tl.memstats, &tl.restore_end,
                    &tl.busy_wait_start, &tl.crash_time, &tl.heartbeat_stop, &tl.node_death, &tl.train_end,
                    &tl.job_end, &tl.metrics_start, &tl.metrics_end})
    mv(*v);
  for (auto& r : tl.steps) {
    r.start += shift;
    r.end += shift;
  }
}

}  // namespace

Timeline BuildTimeline(const Scenario& s) {
  Timeline tl;
  PlaceStages(s, tl);
  // Where does training stop, and why?
  const Fault* terminal = TerminalFault(s);
  PlaceSteps(s, LastCompletedStep(s, terminal), tl);
  const double last_end = tl.steps.empty() ? tl.restore_end : tl.steps.back().end;
  if (!terminal) FinishWithoutFault(s, last_end, tl);
  else FinishAfterFault(s, *terminal, last_end, tl);
  tl.metrics_end = tl.outcome == Outcome::kHanging ? tl.train_end : tl.job_end;
  ShiftToAbsoluteTime(s, tl);
  return tl;
}

}  // namespace mt::launch::sim
