// A scenario describes one simulated MaxText-on-Slurm job: who ran it where, how fast it
// trained, and which faults hit it. Scenarios are YAML files (configs/scenarios/*.yaml);
// docs/simtrain.md lists every key. All times are UTC seconds since the epoch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mt::launch::sim {

enum class FaultKind {
  kHang,             // steps stop after `step`; GPUs busy-wait (100 % util, ~300 W)
  kOom,              // RESOURCE_EXHAUSTED at `step` (or during compile when step < first step)
  kNcclTimeout,      // collective timeout at `step`, then the job fails
  kHeartbeat,        // coordinator declares `tasks` dead after step `step`
  kRdmaRetransmits,  // RDMA retransmits on `hosts` during steps [step, end_step]
  kThermal,          // GPU thermal throttling on `hosts` during steps [step, end_step]
  kNodeFail,         // `hosts[0]` dies at `step` (training process SIGKILLed)
  kThreadLeak,       // +extra_procs runnable threads on every host from training start
  kMoeLbSpike,       // MoE load-balance loss spikes at `step`; TGS declines afterwards
  kCancel,           // scancel / SIGTERM after `step` (or after a hang)
  kTimeLimit,        // Slurm time limit reached after `step`
};

const char* FaultKindName(FaultKind kind);

struct Fault {
  FaultKind kind = FaultKind::kHang;
  int64_t step = 0;                // first affected step (or "after this step")
  int64_t end_step = -1;           // last affected step for ranged faults; -1 = to the end
  std::vector<std::string> hosts;  // rdma / thermal / node_fail
  std::vector<int> gpus;           // thermal: affected GPUs (empty = all)
  std::vector<int> tasks;          // heartbeat: accused task ids
  double tgs = 0;                  // rdma / thermal: TGS while active (absolute), or
  double tgs_factor = 1.0;         //   a factor on the baseline when tgs is 0
  int ramp_steps = 0;              // rdma / thermal: steps to reach the full drop
  double retx_per_s = 2500;        // rdma: retransmitted packets per second per affected NIC
  double duration_s = 3600;        // hang: how long the job keeps hanging before the data ends
  std::string then = "none";       // hang: "none" (still hanging) or "cancel"
  double timeout_s = 900;          // heartbeat timeout
  bool real_death = false;         // heartbeat: the accused tasks really died
  double crash_delay_s = 2;        // heartbeat: seconds after the step when the crash is logged
  int exit_code = 137;             // node_fail
  int extra_procs = 17;            // thread leak
  int extra_init_waves = 2;        // thread leak: extra RCCL init waves in the log
  double decline_to = 0.9;         // moe: TGS factor reached after decline_steps
  int64_t decline_steps = 150;     // moe
  double lb_peak = 0.08;           // moe: peak tb_learning_moe_lb_loss
  double temperature_c = 104;      // thermal
};

struct Scenario {
  // --- job ---
  std::string job_id;
  std::string model;
  std::string alias;                     // MODEL_NAME_ALIAS (optional)
  std::string exp_tag;                   // the user tag before passthrough args (optional)
  std::vector<std::string> passthrough;  // key=value and _env_K=V args after `--`
  std::vector<std::string> hosts;        // node 0 first; task id = index
  int gpus_per_node = 8;
  double start = 0;                      // Slurm job start
  bool has_anchor = false;               // shift time so that anchor_step ends at anchor_time
  int64_t anchor_step = 0;
  double anchor_time = 0;
  uint64_t seed = 1;
  bool ray = true;
  std::string gpu = "MI355X";
  std::string dtype = "bf16";
  double peak_tflops = 0;                // 0 = from the GPU x dtype table
  int jax_port = 0;                      // 0 = derived from the seed
  std::string user = "mtuser";

  // --- training ---
  int64_t steps = 100;                   // steps= (total configured)
  int64_t first_step = 0;                // > 0: restored from checkpoint first_step - 1
  int64_t stop_step = -1;                // last completed step when nothing fails; -1 = steps - 1
  bool running = false;                  // the job is still running at the end of the data
  int per_device_batch_size = 4;
  int max_target_length = 8192;
  double tgs = 3000;                     // steady Tokens/s/device
  double tgs_noise = 0.003;              // relative noise per step
  double flops_per_token = 2e11;         // model FLOPs per token (for TFLOP/s/device and MFU)
  double loss_start = 10.5;
  double loss_end = 2.5;
  int64_t checkpoint_period = 0;         // 0 = no checkpoints
  double checkpoint_save_s = 30;         // extra seconds on the step after a save
  double compile_s = 180;                // step 0 seconds (XLA compile)
  double init_s = 120;                   // Training BEGIN -> Memstats
  double restore_s = 150;                // restore duration before the first step
  bool moe = false;
  int init_waves = 3;                    // RCCL init waves in a fresh run
  std::string run_name;                  // default: <model>_<job_id>
  std::string quantization;              // "" or "fp8"
  bool single_replica_restore = false;

  // --- hardware / observability ---
  double power_active_w = 900;
  double power_busywait_w = 300;
  double power_idle_w = 260;
  double procs_running = 18;
  int nics = 8;
  double scrape_interval_s = 30;         // sample step of the compressed TSDB
  std::vector<Fault> faults;

  // --- profiler trace (jax.profiler over a few steps of node 0; profile_steps 0: none) ---
  int64_t profile_first_step = 5;
  int profile_steps = 0;
  double profile_compute_share = 0.78;   // of each profiled step: compute kernels
  double profile_exposed_comm_share = 0.09;   // collectives not hidden behind compute
  int profile_slow_gpu = -1;             // a GPU of node 0 whose kernels run slower
  double profile_slow_pct = 0;           // by this much
  int layers = 0;                        // transformer layers; 0: from the model name

  // Derived helpers.
  int64_t LastPlannedStep() const { return stop_step >= 0 ? stop_step : steps - 1; }
  double PeakTflops() const;
  std::string JobName() const;           // JAX-<model>[-<EXP_TAG>]
  std::string ExpTag() const;            // user tag joined with transformed passthrough args
  std::string JobDirName() const { return job_id + "-" + JobName(); }
  std::string RunName() const;
  const Fault* Find(FaultKind kind) const;
};

// Parses YAML text. On failure returns false and sets *error to a message that names the
// offending key (and `source` when given).
bool ParseScenario(const std::string& yaml_text, const std::string& source, Scenario* out,
                   std::string* error);

// Parses an ISO-8601 UTC time "YYYY-MM-DDTHH:MM:SS[.fff]Z"; false on malformed input.
bool ParseIsoTime(const std::string& text, double* out);
// Formats seconds since the epoch as "YYYY-MM-DDTHH:MM:SSZ".
std::string FormatIsoTime(double t);

}  // namespace mt::launch::sim
