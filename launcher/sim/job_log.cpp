#include "launcher/sim/job_log.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <numeric>
#include <vector>

#include "base/hostlist.h"
#include "launcher/sim/noise.h"

namespace mt::launch::sim {
namespace {

constexpr uint64_t kStreamOrder = 31, kStreamPid = 32, kStreamMem = 33;

std::string Fmt(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// absl log prefix: "E0224 19:21:00.004512 2883811 file.cc:123] "
std::string AbslPrefix(char severity, double t, long tid, const char* file_line) {
  std::time_t secs = static_cast<std::time_t>(std::floor(t));
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  const int micros = static_cast<int>((t - std::floor(t)) * 1e6);
  std::snprintf(buf, sizeof buf, "%c%02d%02d %02d:%02d:%02d.%06d %7ld %s] ", severity, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, micros, tid, file_line);
  return buf;
}

std::string SlurmTime(double t) {  // Slurm prints local time without a zone; the cluster runs UTC
  std::time_t secs = static_cast<std::time_t>(std::floor(t));
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

class LogBuilder {
 public:
  LogBuilder(const Scenario& s) : s_(s), n_(static_cast<int>(s.hosts.size())) {
    for (int i = 0; i < n_; ++i) labels_.push_back(RankLabel(i, n_));
    out_.reserve(1 << 20);
  }
  void Raw(const std::string& line) {
    out_ += line;
    out_ += '\n';
  }
  void Rank(int task, const std::string& line) {
    out_ += labels_[task];
    out_ += line;
    out_ += '\n';
  }
  // Each task prints `make(task)`; tasks interleave in a deterministic pseudo-random order,
  // as srun's merged output does.
  template <typename F>
  void AllRanks(uint64_t phase, F&& make) {
    const int start = n_ > 0 ? static_cast<int>(Mix64(s_.seed ^ (phase * 0x9E37u + kStreamOrder)) % n_) : 0;
    const int stride = Stride();
    for (int k = 0; k < n_; ++k) {
      const int task = (start + k * stride) % n_;
      make(task);
    }
  }
  int Pid(int task) const { return 100000 + static_cast<int>(Mix64(s_.seed + kStreamPid + task) % 800000); }
  std::string& str() { return out_; }

 private:
  int Stride() const {  // a step coprime with n visits every task exactly once
    for (int c : {7, 5, 11, 13, 3})
      if (std::gcd(c, n_) == 1) return c;
    return 1;
  }
  const Scenario& s_;
  int n_;
  std::vector<std::string> labels_;
  std::string out_;
};

std::string GpuArch(const std::string& gpu) {
  if (gpu == "MI355X") return "gfx950";
  if (gpu == "MI300X" || gpu == "MI325X") return "gfx942";
  return "";
}

void RcclWave(LogBuilder& b, const Scenario& s, uint64_t phase, bool first_wave) {
  const std::string arch = GpuArch(s.gpu);
  b.AllRanks(phase, [&](int task) {
    for (int g = 0; g < s.gpus_per_node; ++g) {
      const std::string who = s.hosts[task] + ":" + std::to_string(b.Pid(task)) + ":" +
                              std::to_string(b.Pid(task) + 40 + g) + " [" + std::to_string(g) + "] ";
      b.Rank(task, who + "init.cc:2095 NCCL WARN MSCCL++: Feature not enabled");
      if (first_wave && !arch.empty())
        b.Rank(task, who + "NCCL WARN LL cutoff points not detected for a supported arch " + arch);
    }
  });
}

std::string Passthrough(const Scenario& s) {
  std::string p;
  for (const auto& a : s.passthrough) p += (p.empty() ? "" : " ") + a;
  return p;
}

std::string Summary(const Scenario& s, const Timeline& tl) {
  return RenderJobSummary({.job_id = s.job_id,
                           .job_name = s.JobName(),
                           .model = s.model,
                           .nodes = static_cast<int>(s.hosts.size()),
                           .wall_seconds = tl.job_end - tl.job_start,
                           .exit_code = tl.exit_code,
                           .reason = tl.stage_failure});
}

}  // namespace

std::string StepLine(const Scenario& s, const StepRecord& r) {
  char buf[320];
  const long total_weights = static_cast<long>(s.per_device_batch_size) * s.max_target_length *
                             static_cast<long>(s.hosts.size()) * s.gpus_per_node;
  if (s.PeakTflops() > 0) {
    std::snprintf(buf, sizeof buf,
                  "completed step: %lld, seconds: %.3f, TFLOP/s/device: %.3f, MFU: %.2f%%, Tokens/s/device: %.3f, "
                  "total_weights: %ld, loss: %.3f",
                  static_cast<long long>(r.step), r.seconds, r.tflops, r.mfu, r.tgs, total_weights, r.loss);
  } else {
    std::snprintf(buf, sizeof buf,
                  "completed step: %lld, seconds: %.3f, TFLOP/s/device: %.3f, Tokens/s/device: %.3f, "
                  "total_weights: %ld, loss: %.3f",
                  static_cast<long long>(r.step), r.seconds, r.tflops, r.tgs, total_weights, r.loss);
  }
  return buf;
}

namespace {

// --- header (_job.sbatch) ---
void WriteHeader(LogBuilder& b, const Scenario& s, const LogPaths& paths, int jax_port, int ray_port) {
  const int n = static_cast<int>(s.hosts.size());
  b.Raw("JOB_ID=" + s.job_id);
  b.Raw("JOB_NAME=" + s.JobName());
  b.Raw("NNODES=" + std::to_string(n));
  b.Raw("JOB_NODELIST=" + base::CompactHostList(s.hosts));
  b.Raw("JAX_COORDINATOR_PORT=" + std::to_string(jax_port));
  if (s.ray) b.Raw("RAY_PORT=" + std::to_string(ray_port));
  b.Raw("PASSTHROUGH_ARGS=\"" + Passthrough(s) + "\"");
  b.Raw("MODEL_NAME=" + s.model);
  if (!s.alias.empty()) b.Raw("MODEL_NAME_ALIAS=" + s.alias);
  if (!s.ExpTag().empty()) b.Raw("EXP_TAG=" + s.ExpTag());
  b.Raw("==STAGE TIMEOUTS (override: STAGE_TIMEOUTS=\"stage:seconds,...\")==");
  b.Raw("  preflight    900s");
  b.Raw("  pull         900s");
  b.Raw("  ecc          300s");
  b.Raw("  train        none");
  b.Raw("[INFO] Running from artifact: " + paths.artifact_dir);
  b.Raw("=== GIT SUMMARY BEGIN ===");
  b.Raw("[BRANCH]");
  b.Raw("main");
  b.Raw("[LAST COMMIT]");
  b.Raw("c0ffee1 Merge pull request #127 from gh/CODEOWNERS");
  b.Raw("[LAST COMMIT DIFF --stat]");
  b.Raw(" .github/CODEOWNERS | 3 +++");
  b.Raw(" 1 file changed, 3 insertions(+)");
  b.Raw("[CHANGES --name-status]");
  b.Raw("[DIFF]");
  b.Raw("[UNTRACKED]");
  b.Raw("=== GIT SUMMARY END ===");
}

// --- preflight, pull, ECC ---
void WriteInfraStages(LogBuilder& b, const Scenario& s, const Timeline& tl) {
  const int n = static_cast<int>(s.hosts.size());
  b.Raw("== Preflight BEGIN (timeout=900s) ==");
  b.AllRanks(1, [&](int t) {
    const std::string& h = s.hosts[t];
    b.Rank(t, h + " | [CLEANUP] no stale GPU processes; 0 containers pruned");
    b.Rank(t, h + " | [THP] transparent_hugepage set to never");
    b.Rank(t, h + " | [NUMA] numa_balancing=0");
    if (n > 1) b.Rank(t, h + " | [CHECK_IPV6_RULES] " + std::to_string(s.nics) + " (expected " + std::to_string(s.nics) + ")");
    if (n > 1) b.Rank(t, h + " | [CHECK_DCQCN] enabled on all RDMA devices");
  });
  b.Raw("== Preflight END (" + std::to_string(std::lround(tl.preflight_end - tl.preflight_begin)) + "s) ==");
  b.Raw("== Docker pull BEGIN (timeout=900s) ==");
  b.AllRanks(2, [&](int t) { b.Rank(t, "[pull] rocm/jax-training:maxtext-v26.2 is up to date on " + s.hosts[t]); });
  b.Raw("== Docker pull END (" + std::to_string(std::lround(tl.pull_end - tl.pull_begin)) + "s) ==");
  b.Raw("== ECC check BEGIN (timeout=300s) ==");
  b.AllRanks(3, [&](int t) { b.Rank(t, s.hosts[t] + ": OK (no ECC/UMC errors reported)"); });
  b.Raw("== ECC check END (" + std::to_string(std::lround(tl.ecc_end - tl.ecc_begin)) + "s) ==");
}

// Containers, Ray and the metrics exporter (under Ray), and the runtime's start-up noise.
void WriteContainersStarting(LogBuilder& b, const Scenario& s, int ray_port) {
  const int n = static_cast<int>(s.hosts.size());
  const std::string peak = Fmt("%.0f", s.PeakTflops());
  b.AllRanks(4, [&](int t) {
    b.Rank(t, "[container] maxtext-slurm-" + s.job_id + "-node" + std::to_string(t) + " starting (podman)");
    b.Rank(t, "WARNING: AMD GPU device(s) is/are in a low-power state");
  });
  if (s.ray) {
    b.Rank(0, "[Ray] HEAD started on " + s.hosts[0] + ":" + std::to_string(ray_port));
    b.Rank(0, "[Prometheus] Started on port 9190 (ray: " + std::to_string(n) + " targets; node_hw: " +
                  std::to_string(n) + " targets)");
    b.Rank(0, "ssh -J " + s.user + "@login01 -L 8265:localhost:8265 -L 6006:localhost:6006 -L 9190:localhost:9190 root@" +
                  s.hosts[0]);
    b.AllRanks(5, [&](int t) {
      b.Rank(t, "[metrics_exporter] started on " + s.hosts[t] + ":9400 (interval 10s)");
      b.Rank(t, "[Node " + std::to_string(t) + " @ " + s.hosts[t] + "] MaxTextTrainerActor started training subprocess (pid " +
                    std::to_string(b.Pid(t)) + ")");
    });
  }
  b.AllRanks(6, [&](int t) {
    b.Rank(t, "Failed call to cuInit: UNKNOWN ERROR (303)");
    b.Rank(t, "Fiber init: default domain = futex");
    b.Rank(t, "No hardware is found. Using default TPU version: jellyfish");
    if (s.PeakTflops() > 0)
      b.Rank(t, "[MFU] MFU tracking enabled (gpu=" + s.gpu + ", dtype=" + s.dtype + ", peak=" + peak +
                    " TFLOP/s, source=table)");
    else
      b.Rank(t, "[MFU] MFU tracking disabled (unknown GPU " + s.gpu + ")");
  });
}

void WriteConfigParams(LogBuilder& b, const Scenario& s, const LogPaths& paths) {
  const int n = static_cast<int>(s.hosts.size());
  const std::string tb_dir = paths.container_out + "/" + s.RunName() + "/tensorboard/";
  const std::vector<std::pair<std::string, std::string>> params = {
      {"base_output_directory", paths.container_out},
      {"run_name", s.RunName()},
      {"tensorboard_dir", tb_dir},
      {"steps", std::to_string(s.steps)},
      {"per_device_batch_size", std::to_string(s.per_device_batch_size)},
      {"max_target_length", std::to_string(s.max_target_length)},
      {"quantization", s.quantization == "fp8" ? "QuantizationType.FP8" : "NONE"},
      {"enable_checkpointing", s.checkpoint_period > 0 ? "True" : "False"},
      {"checkpoint_period", std::to_string(s.checkpoint_period > 0 ? s.checkpoint_period : 10000)},
      {"enable_single_replica_ckpt_restoring", s.single_replica_restore ? "True" : "False"},
      {"hardware", "gpu"},
      {"attention", "cudnn_flash_te"},
      {"dcn_fsdp_parallelism", std::to_string(n)},
      {"ici_fsdp_parallelism", std::to_string(s.gpus_per_node)},
      {"remat_policy", "full"},
      {"dtype", "bfloat16"},
      {"jax_distributed_heartbeat_timeout_seconds", "900"},
  };
  b.AllRanks(7, [&](int t) {
    for (const auto& [k, v] : params) b.Rank(t, "Config param " + k + ": " + v);
  });
}

// Memstats: every rank, one line per local device.
void WriteMemstats(LogBuilder& b, const Scenario& s) {
  const uint64_t seed = s.seed;
  b.AllRanks(9, [&](int t) {
    b.Rank(t, "Memstats: After params initialized:");
    for (int g = 0; g < s.gpus_per_node; ++g) {
      const double used = 58.0 + 6.0 * Uniform(seed, kStreamMem, static_cast<uint64_t>(t * 64 + g));
      char line[128];
      std::snprintf(line, sizeof line, "\tUsing (GB) %.2f / 288.0 (%.1f%%) on rocm:%d", used, used / 288.0 * 100,
                    t * s.gpus_per_node + g);
      b.Rank(t, line);
    }
  });
}

// The checkpoint restore (or its absence), the RCCL waves it and the scenario add, and the
// barrier before the training loop.
void WriteRestoreAndBarrier(LogBuilder& b, const Scenario& s) {
  const Fault* leak = s.Find(FaultKind::kThreadLeak);
  if (s.first_step > 0) {
    b.AllRanks(10, [&](int t) {
      b.Rank(t, "restoring from this run's directory step " + std::to_string(s.first_step - 1));
      if (s.single_replica_restore)
        b.Rank(t, "Restoring with SingleReplicaArrayHandler (replica 0 reads, broadcast_one_replica_to_all)");
    });
    const int extra = leak ? leak->extra_init_waves : 0;
    for (int w = 0; w < extra; ++w) RcclWave(b, s, 20 + static_cast<uint64_t>(w), false);
  } else {
    b.AllRanks(10, [&](int t) { b.Rank(t, "No existing checkpoints found, not restoring checkpoint."); });
  }
  for (int w = 1; w < s.init_waves; ++w) RcclWave(b, s, 40 + static_cast<uint64_t>(w), false);
  b.AllRanks(11, [&](int t) {
    b.Rank(t, "Synchronizing hosts before training loop");
    b.Rank(t, "Total memory: 241.7 GiB / Temp: 63.2 GiB");
  });
}

// --- training: start-up ---
void WriteTrainingStartup(LogBuilder& b, const Scenario& s, const LogPaths& paths, int ray_port) {
  b.Raw("== Training BEGIN (no timeout) ==");
  WriteContainersStarting(b, s, ray_port);
  WriteConfigParams(b, s, paths);
  RcclWave(b, s, 8, true);
  WriteMemstats(b, s);
  WriteRestoreAndBarrier(b, s);
}

// The last fault of the scenario that ends the job (nullptr when none does).
const Fault* TerminatingFault(const Scenario& s) {
  const Fault* term = nullptr;
  for (const auto& f : s.faults)
    if (f.kind == FaultKind::kOom || f.kind == FaultKind::kNcclTimeout || f.kind == FaultKind::kHeartbeat ||
        f.kind == FaultKind::kNodeFail || f.kind == FaultKind::kCancel || f.kind == FaultKind::kTimeLimit ||
        f.kind == FaultKind::kHang)
      term = &f;
  return term;
}

// --- steps ---
void WriteSteps(LogBuilder& b, const Scenario& s, const Timeline& tl) {
  for (size_t i = 0; i < tl.steps.size(); ++i) {
    const StepRecord& r = tl.steps[i];
    const std::string line = StepLine(s, r);
    b.AllRanks(1000 + static_cast<uint64_t>(r.step), [&](int t) { b.Rank(t, line); });
    if (i == 0) b.Rank(0, "Token indices sequence length is longer than the specified maximum sequence length for this model (9012 > 8192). Running this sequence through the model will result in indexing errors");
    if (r.checkpoint_after)
      b.AllRanks(500000 + static_cast<uint64_t>(r.step),
                 [&](int t) { b.Rank(t, "Saved a checkpoint at step " + std::to_string(r.step) + "."); });
  }
}

void NodeExitAll(LogBuilder& b, const Scenario& s, int code, uint64_t phase) {
  b.AllRanks(phase, [&](int t) { b.Rank(t, "NODE_EXIT host=" + s.hosts[t] + " exit=" + std::to_string(code)); });
}

void SrunErrors(LogBuilder& b, const Scenario& s, int code, uint64_t phase) {
  b.AllRanks(phase, [&](int t) {
    b.Raw("srun: error: " + s.hosts[t] + ": task " + std::to_string(t) + ": Exited with exit code " + std::to_string(code));
  });
}

void WriteHangEnd(LogBuilder& b, const Scenario& s, const Fault& term, double crash) {
  if (term.then == "cancel") {
    b.Raw("slurmstepd: error: *** JOB " + s.job_id + " ON " + s.hosts[0] + " CANCELLED AT " + SlurmTime(crash) + " ***");
    b.Raw("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.");
    NodeExitAll(b, s, 143, 900001);
    SrunErrors(b, s, 143, 900002);
    b.Raw("srun: Terminating StepId=" + s.job_id + ".3");
  }
}

void WriteOomEnd(LogBuilder& b, const Scenario& s) {
  b.AllRanks(900010, [&](int t) {
    b.Rank(t, "Traceback (most recent call last):");
    b.Rank(t, "  File \"/maxtext-slurm/utils/monkey_patch_maxtext.py\", line 214, in <module>");
    b.Rank(t, "    train_main(argv)");
    b.Rank(t, "  File \"/workspace/maxtext/MaxText/train.py\", line 1031, in train_loop");
    b.Rank(t, "    state, metrics = p_train_step(state, example_batch, nextrng)");
    b.Rank(t, "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 21.47GiB.");
  });
  NodeExitAll(b, s, 1, 900011);
  SrunErrors(b, s, 1, 900012);
}

void WriteNcclTimeoutEnd(LogBuilder& b, const Scenario& s, const Fault& term) {
  b.AllRanks(900020, [&](int t) {
    const std::string who = s.hosts[t] + ":" + std::to_string(b.Pid(t)) + ":" + std::to_string(b.Pid(t) + 77) + " [0] ";
    b.Rank(t, who + "proxy.cc:1496 NCCL WARN [Service thread] Timeout waiting for peer after " +
                  Fmt("%.0f", term.timeout_s) + " seconds");
    b.Rank(t, "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.");
  });
  NodeExitAll(b, s, 1, 900021);
  SrunErrors(b, s, 1, 900022);
}

bool IsAccused(const Fault& term, int t) {
  bool is_accused = false;
  for (int task : term.tasks) is_accused = is_accused || task == t;
  return is_accused;
}

// The coordinator (task 0) reports the tasks that stopped sending heartbeats; every task
// still alive then reports the service's error and terminates.
void WriteHeartbeatEnd(LogBuilder& b, const Scenario& s, const Fault& term, double crash) {
  b.Rank(0, AbslPrefix('E', crash - 0.004, b.Pid(0) + 3, "coordination_service.cc:407") + "Task /job:jax_worker/replica:0/task:" +
                std::to_string(term.tasks[0]) + " heartbeat timeout. This indicates that the remote task has failed, got preempted, or crashed unexpectedly. Check the task logs for an earlier error to debug further.");
  b.Rank(0, "UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats):");
  for (int task : term.tasks) b.Rank(0, "/job:jax_worker/replica:0/task:" + std::to_string(task));
  b.Rank(0, "The tasks have crashed. Check the task logs for an earlier error to debug further.");
  b.AllRanks(900030, [&](int t) {
    if (IsAccused(term, t) && term.real_death) return;  // a dead task logs nothing
    b.Rank(t, AbslPrefix('E', crash + 0.0005 * t, b.Pid(t) + 5, "coordination_service_agent.cc:332") +
                  "Polled error from coordination service: UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats):");
    for (int task : term.tasks) b.Rank(t, "/job:jax_worker/replica:0/task:" + std::to_string(task));
    b.Rank(t, AbslPrefix('F', crash + 0.0007 * t, b.Pid(t) + 5, "client.h:77") +
                  "Terminating process because the JAX distributed service detected fatal errors. This most likely indicates that another task died; see the other task logs for more details. absl::Status: UNAVAILABLE: The following tasks are unhealthy (stopped sending heartbeats):");
    for (int task : term.tasks) b.Rank(t, "/job:jax_worker/replica:0/task:" + std::to_string(task));
    b.Rank(t, "The tasks have crashed. Check the task logs for an earlier error to debug further.");
  });
  b.AllRanks(900031, [&](int t) {
    b.Rank(t, "NODE_EXIT host=" + s.hosts[t] + " exit=" + std::to_string(IsAccused(term, t) && term.real_death ? 137 : 134));
  });
  SrunErrors(b, s, 134, 900032);
}

void WriteNodeFailEnd(LogBuilder& b, const Scenario& s, const Fault& term, double crash) {
  const int n = static_cast<int>(s.hosts.size());
  int task = 0;
  for (int i = 0; i < n; ++i)
    if (s.hosts[i] == term.hosts[0]) task = i;
  b.Rank(task, "NODE_EXIT host=" + s.hosts[task] + " exit=" + std::to_string(term.exit_code));
  b.Raw("srun: error: " + s.hosts[task] + ": task " + std::to_string(task) + ": Killed");
  b.Raw("srun: Terminating StepId=" + s.job_id + ".3");
  b.Raw("slurmstepd: error: *** STEP " + s.job_id + ".3 ON " + s.hosts[0] + " CANCELLED AT " + SlurmTime(crash) + " ***");
}

void WriteCancelEnd(LogBuilder& b, const Scenario& s, const Fault& term, double crash) {
  const std::string why = term.kind == FaultKind::kTimeLimit ? " DUE TO TIME LIMIT" : "";
  b.Raw("slurmstepd: error: *** JOB " + s.job_id + " ON " + s.hosts[0] + " CANCELLED AT " + SlurmTime(crash) + why + " ***");
  b.Raw("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.");
  NodeExitAll(b, s, 143, 900040);
  SrunErrors(b, s, 143, 900041);
  b.Raw("srun: Terminating StepId=" + s.job_id + ".3");
}

// --- how it ends ---
void WriteFaultEnd(LogBuilder& b, const Scenario& s, const Fault& term, double crash) {
  switch (term.kind) {
    case FaultKind::kHang:
      WriteHangEnd(b, s, term, crash);
      break;
    case FaultKind::kOom:
      WriteOomEnd(b, s);
      break;
    case FaultKind::kNcclTimeout:
      WriteNcclTimeoutEnd(b, s, term);
      break;
    case FaultKind::kHeartbeat:
      WriteHeartbeatEnd(b, s, term, crash);
      break;
    case FaultKind::kNodeFail:
      WriteNodeFailEnd(b, s, term, crash);
      break;
    case FaultKind::kCancel:
    case FaultKind::kTimeLimit:
      WriteCancelEnd(b, s, term, crash);
      break;
    default:
      break;
  }
}

void WriteTrainingEndAndSummary(LogBuilder& b, const Scenario& s, const Timeline& tl) {
  const long train_s = std::lround(tl.train_end - tl.train_begin);
  if (tl.outcome == Outcome::kCompleted) {
    if (s.ray) b.AllRanks(900050, [&](int t) {
      b.Rank(t, "[Node " + std::to_string(t) + " @ " + s.hosts[t] + "] Training subprocess exited with code 0");
    });
    b.Raw("== Training END (" + std::to_string(train_s) + "s) ==");
  } else if (tl.outcome == Outcome::kFailed) {
    b.Raw("== Training FAILED (exit=" + std::to_string(tl.exit_code) + ", " + std::to_string(train_s) + "s) ==");
  } else {
    b.Raw("== Training FAILED (exit=143, " + std::to_string(train_s) + "s) ==");
  }
  b.Raw(Summary(s, tl));
}

}  // namespace

std::string RenderJobLog(const Scenario& s, const Timeline& tl, const LogPaths& paths) {
  LogBuilder b(s);
  const uint64_t seed = s.seed;
  const int jax_port = s.jax_port > 0 ? s.jax_port : 20000 + static_cast<int>(Mix64(seed + 1) % 32767);
  const int ray_port = 20000 + static_cast<int>(Mix64(seed + 2) % 32767);
  WriteHeader(b, s, paths, jax_port, ray_port);
  WriteInfraStages(b, s, tl);
  WriteTrainingStartup(b, s, paths, ray_port);
  const Fault* term = TerminatingFault(s);
  WriteSteps(b, s, tl);
  if (term) WriteFaultEnd(b, s, *term, tl.crash_time);
  if (tl.has_summary) WriteTrainingEndAndSummary(b, s, tl);
  return std::move(b.str());
}

}  // namespace mt::launch::sim
