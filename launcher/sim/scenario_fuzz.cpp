// MakeFuzzCase: one seed → one job (a fault family or a clean run, with or without decoys)
// or a pair of jobs for compare_jobs. The families and what the truth calls them are listed
// in scenario_fuzz.h; the effects the model has no fault kind for go through the overlay.
#include "launcher/sim/scenario_fuzz.h"

#include <cmath>
#include <cstdio>

#include "launcher/sim/fuzz_random.h"
#include "launcher/sim/fuzz_truth.h"
#include "launcher/sim/timeline.h"

namespace mt::launch::sim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// A healthy job on a random cluster: everything the methods must infer varies here.
Scenario BaseScenario(FuzzRng& r, uint64_t seed, int nhosts, FuzzTruth* t) {
  Scenario s;
  s.job_id = std::to_string(r.Int(10000, 9999999));
  static const std::vector<std::string> kModels = {"llama3.1-70b", "mixtral-8x22b", "deepseek3-671b", "qwen3-30b-a3b",
                                                   "llama3.1-405b", "grok-1"};
  s.model = r.Pick(kModels);
  s.moe = s.model == "mixtral-8x22b" || s.model == "deepseek3-671b" || s.model == "qwen3-30b-a3b" || s.model == "grok-1";
  t->naming = FuzzHostNames(r, nhosts, &s.hosts);
  static const std::vector<std::string> kGpus = {"MI355X", "MI300X", "H100"};
  s.gpu = r.Pick(kGpus);
  s.gpus_per_node = r.Chance(0.8) ? 8 : 4;
  s.nics = static_cast<int>(r.Pick(std::vector<int64_t>{2, 4, 8}));
  s.start = std::floor(r.U(1704067200.0, 1780000000.0));   // 2024-01 .. 2026-05
  s.seed = seed * 7919 + 17;
  s.steps = r.Int(220, 420);
  s.passthrough = {"steps=" + std::to_string(s.steps)};
  if (r.Chance(0.3)) {
    s.running = true;
    s.stop_step = s.steps - 1 - r.Int(10, 60);
  }
  s.per_device_batch_size = static_cast<int>(r.Pick(std::vector<int64_t>{2, 4, 8}));
  s.max_target_length = static_cast<int>(r.Pick(std::vector<int64_t>{4096, 8192}));
  const double tokens = static_cast<double>(s.per_device_batch_size) * s.max_target_length;
  s.tgs = std::round(tokens / r.U(5, 14));
  s.tgs_noise = r.U(0.002, 0.012);
  s.compile_s = r.U(60, 200);
  s.init_s = r.U(40, 150);
  s.checkpoint_period = r.Chance(0.4) ? r.Pick(std::vector<int64_t>{50, 100}) : 0;
  s.checkpoint_save_s = r.U(10, 40);
  s.power_active_w = std::round(r.U(600, 1000));
  s.power_busywait_w = std::round(s.power_active_w * r.U(0.3, 0.4));
  s.power_idle_w = std::round(s.power_busywait_w * r.U(0.7, 0.9));
  s.procs_running = std::round(r.U(8, 40));
  s.scrape_interval_s = r.Chance(0.6) ? 30 : 60;
  t->hosts = s.hosts;
  return s;
}

// A TGS drop over [step, end_step] without any metric of its own: the overlay adds the
// family's metrics. (An RDMA fault on no host changes only the step times.)
Fault Carrier(int64_t step, int64_t end_step, double factor, int ramp) {
  Fault f;
  f.kind = FaultKind::kRdmaRetransmits;
  f.step = step;
  f.end_step = end_step;
  f.tgs_factor = factor;
  f.ramp_steps = ramp;
  f.retx_per_s = 0;
  return f;
}

struct Window {
  int64_t onset = 0, end = -1;   // steps; end -1: to the end of the run
  double t0 = 0, t1 = 1e18;      // wall time
};

Window PickWindow(FuzzRng& r, const Scenario& s) {
  const int64_t last = s.LastPlannedStep();
  Window w;
  w.onset = r.Int(static_cast<int64_t>(0.2 * static_cast<double>(last)), static_cast<int64_t>(0.55 * static_cast<double>(last)));
  if (r.Chance(0.4)) w.end = std::min(last - 10, w.onset + r.Int(static_cast<int64_t>(0.15 * static_cast<double>(last)),
                                                                 static_cast<int64_t>(0.3 * static_cast<double>(last))));
  return w;
}

void Times(const Scenario& s, Window* w) {
  const Timeline tl = BuildTimeline(s);
  w->t0 = tl.StepStart(w->onset);
  w->t1 = w->end >= 0 ? tl.StepEnd(w->end) : 1e18;
}

std::vector<std::string> Culprits(FuzzRng& r, const Scenario& s, int k, bool spare_head) {
  std::vector<std::string> out;
  for (int i : r.Distinct(k, spare_head ? 1 : 0, static_cast<int>(s.hosts.size()))) out.push_back(s.hosts[static_cast<size_t>(i)]);
  return out;
}

void Add(FuzzJob* j, Effect::Op op, const std::string& metric, const std::string& host, double t0, double t1, double v,
         double noise = 0) {
  j->effects.push_back(MakeEffect(op, metric, host, t0, t1, v, noise));
}

// Families that slow every step while they last (a straggler gates every collective).
void SlowdownFamily(FuzzRng& r, const std::string& family, FuzzJob* j, FuzzTruth* t) {
  Scenario& s = j->scenario;
  Window w = PickWindow(r, s);
  const double factor = r.U(0.7, 0.95);
  const int k = static_cast<int>(r.Int(1, std::min<int64_t>(3, static_cast<int64_t>(s.hosts.size()) / 4 + 1)));
  t->culprits = Culprits(r, s, k, false);
  t->onset_step = w.onset;
  t->end_step = w.end;
  t->magnitude["tgs_factor"] = factor;
  if (family == "thermal") {
    Fault f;
    f.kind = FaultKind::kThermal;
    f.step = w.onset;
    f.end_step = w.end;
    f.hosts = t->culprits;
    f.tgs_factor = factor;
    f.temperature_c = std::round(r.U(96, 108));
    for (int g : r.Distinct(static_cast<int>(r.Int(1, s.gpus_per_node)), 0, s.gpus_per_node)) f.gpus.push_back(g);
    t->magnitude["temperature_c"] = f.temperature_c;
    t->magnitude["gpus"] = static_cast<double>(f.gpus.size());
    s.faults.push_back(f);
    Times(s, &w);
  } else if (family == "rdma") {
    // One or two phases, each with its own hosts and its own TGS level (case 8308's shape).
    const bool two = k >= 2 && w.end >= 0 && r.Chance(0.6);
    const size_t split = two ? static_cast<size_t>(r.Int(1, k - 1)) : t->culprits.size();
    Fault f;
    f.kind = FaultKind::kRdmaRetransmits;
    f.step = w.onset;
    f.end_step = w.end;
    f.hosts.assign(t->culprits.begin(), t->culprits.begin() + static_cast<std::ptrdiff_t>(split));
    f.tgs_factor = factor;
    f.retx_per_s = std::round(r.U(150, 5000));
    f.ramp_steps = static_cast<int>(r.Int(0, 3));
    s.faults.push_back(f);
    t->magnitude["retx_per_s"] = f.retx_per_s;
    if (two) {
      Fault g = f;
      g.hosts.assign(t->culprits.begin() + static_cast<std::ptrdiff_t>(split), t->culprits.end());
      g.step = w.end + r.Int(10, 30);
      g.end_step = -1;
      g.tgs_factor = r.U(0.7, 0.95);
      g.retx_per_s = std::round(r.U(150, 5000));
      if (g.step < s.LastPlannedStep() - 20) {
        s.faults.push_back(g);
        t->phases.push_back({f.hosts, f.step, f.end_step});
        t->phases.push_back({g.hosts, g.step, g.end_step});
      } else {
        t->culprits = f.hosts;
      }
    }
    Times(s, &w);
  } else {
    s.faults.push_back(Carrier(w.onset, w.end, factor, static_cast<int>(r.Int(0, 3))));
    Times(s, &w);
    const bool uniform = family == "cpu_contention" && r.Chance(0.4);
    if (uniform) {
      t->culprits.clear();
      t->uniform = true;
    }
    const std::vector<std::string> hosts = uniform ? s.hosts : t->culprits;
    const double a = r.U(0, 1);   // one magnitude draw, spread over the family's metrics
    for (const auto& h : hosts) {
      if (family == "tcp") {
        Add(j, Effect::Op::kRate, "hw_tcp_retransmits_total", h, w.t0, w.t1, 30 + a * 1970, 10);
      } else if (family == "io_stall") {
        Add(j, Effect::Op::kSet, "hw_io_pressure_full_pct", h, w.t0, w.t1, 15 + a * 45, 3);
        Add(j, Effect::Op::kSet, "hw_io_pressure_some_pct", h, w.t0, w.t1, 25 + a * 55, 4);
        Add(j, Effect::Op::kAdd, "hw_procs_blocked", h, w.t0, w.t1, std::round(3 + a * 22), 1);
      } else {
        Add(j, Effect::Op::kAdd, "hw_procs_running", h, w.t0, w.t1, std::round(10 + a * 50), 2);
        Add(j, Effect::Op::kAdd, "ray_node_cpu_utilization", h, w.t0, w.t1, 15 + a * 40, 2);
        Add(j, Effect::Op::kRate, "hw_context_switches_total", h, w.t0, w.t1, 5e4 + a * 3.5e5, 5e3);
      }
    }
    t->magnitude["level"] = a;
  }
  t->onset_time = w.t0;
}

// Families where the job stops making progress at the onset step.
void StopFamily(FuzzRng& r, const std::string& family, FuzzJob* j, FuzzTruth* t) {
  Scenario& s = j->scenario;
  s.running = false;
  s.stop_step = -1;
  const int64_t last = s.LastPlannedStep();
  const int64_t onset = r.Int(static_cast<int64_t>(0.3 * static_cast<double>(last)), static_cast<int64_t>(0.8 * static_cast<double>(last)));
  t->onset_step = onset;
  Fault hang;
  hang.kind = FaultKind::kHang;
  hang.step = onset;
  hang.duration_s = std::round(r.U(900, 3600));
  hang.then = r.Chance(0.5) ? "cancel" : "none";
  if (family == "node_death" && r.Chance(0.5)) {
    // The log says so: the training process on the host is SIGKILLed with the node.
    Fault f;
    f.kind = FaultKind::kNodeFail;
    f.step = onset;
    t->culprits = Culprits(r, s, 1, true);
    f.hosts = t->culprits;
    s.faults.push_back(f);
    t->magnitude["log_visible"] = 1;
    const Timeline tl = BuildTimeline(s);
    t->onset_time = tl.node_death >= 0 ? tl.node_death : tl.StepEnd(onset - 1);
    return;
  }
  s.faults.push_back(hang);
  const Timeline tl = BuildTimeline(s);
  const double t_stop = tl.StepEnd(onset);
  t->onset_time = t_stop;
  if (family == "collective_hang") return;   // every GPU busy-waits; no host is to blame
  t->culprits = Culprits(r, s, 1, true);
  const std::string& h = t->culprits[0];
  const double at = t_stop + r.U(5, 60);
  if (family == "node_death") {
    t->magnitude["log_visible"] = 0;
    Add(j, Effect::Op::kDrop, "*", h, at, 1e18, 0);
    return;
  }
  // host_oom: memory climbs to the limit, the kernel kills the trainer, its GPUs go idle.
  const double ramp = r.U(300, 1200);
  Add(j, Effect::Op::kRamp, "ray_node_mem_used", h, at - ramp, at, 0.97 * 3072 * kGiB);
  Add(j, Effect::Op::kSet, "ray_node_mem_used", h, at + 1, 1e18, 0.2 * 3072 * kGiB, 1e9);
  Add(j, Effect::Op::kStep, "hw_oom_kills_total", h, at, 1e18, 1);
  Add(j, Effect::Op::kSet, "hw_gpu_power_watts", h, at, 1e18, s.power_idle_w, 4);
  Add(j, Effect::Op::kSet, "ray_node_gpus_utilization", h, at, 1e18, 0);
  Add(j, Effect::Op::kSet, "hw_gpu_user_processes", h, at, 1e18, 0);
  t->magnitude["ramp_s"] = ramp;
}

void TrainingFamily(FuzzRng& r, FuzzJob* j, FuzzTruth* t) {
  Scenario& s = j->scenario;
  s.moe = true;
  Fault f;
  f.kind = FaultKind::kMoeLbSpike;
  const int64_t last = s.LastPlannedStep();
  f.step = r.Int(static_cast<int64_t>(0.25 * static_cast<double>(last)), static_cast<int64_t>(0.55 * static_cast<double>(last)));
  f.decline_to = r.U(0.8, 0.93);
  f.decline_steps = r.Int(40, 150);
  f.lb_peak = r.U(0.04, 0.12);
  s.faults.push_back(f);
  t->onset_step = f.step;
  t->onset_time = BuildTimeline(s).StepStart(f.step);
  t->magnitude["tgs_factor"] = f.decline_to;
}

}  // namespace

void AddDecoys(FuzzRng& r, FuzzJob* j, FuzzTruth* t);   // fuzz_decoys.cpp
void MakePair(FuzzRng& r, uint64_t seed, FuzzCase* c, FuzzTruth* t);   // fuzz_pairs.cpp
Scenario FuzzBaseScenario(FuzzRng& r, uint64_t seed, int nhosts, FuzzTruth* t) { return BaseScenario(r, seed, nhosts, t); }

FuzzCase MakeFuzzCase(uint64_t seed) {
  FuzzRng r(seed);
  FuzzCase c;
  c.seed = seed;
  FuzzTruth t;
  t.seed = seed;
  if (r.Chance(0.25)) {
    MakePair(r, seed, &c, &t);
    c.truth_json = TruthJson(t, c);
    return c;
  }
  static const std::vector<std::pair<std::string, double>> kFamilies = {
      {"none", 0.12}, {"thermal", 0.10}, {"rdma", 0.12}, {"tcp", 0.08}, {"collective_hang", 0.08}, {"node_death", 0.10},
      {"host_oom", 0.08}, {"io_stall", 0.08}, {"cpu_contention", 0.14}, {"training", 0.10}};
  double u = r.U(), acc = 0;
  std::string family = kFamilies.back().first;
  for (const auto& [f, p] : kFamilies)
    if (u < (acc += p)) {
      family = f;
      break;
    }
  static const std::vector<int64_t> kSizes = {4, 6, 8, 12, 16, 24, 32, 48, 64};
  const int n = static_cast<int>(r.Pick(kSizes) + (r.Chance(0.3) ? -1 : 0));
  FuzzJob j;
  j.scenario = BaseScenario(r, seed, std::max(4, n), &t);
  t.kind = "single";
  t.family = family;
  t.jobs = {j.scenario.job_id};
  if (family == "thermal" || family == "rdma" || family == "tcp" || family == "io_stall" || family == "cpu_contention")
    SlowdownFamily(r, family, &j, &t);
  else if (family == "collective_hang" || family == "node_death" || family == "host_oom")
    StopFamily(r, family, &j, &t);
  else if (family == "training")
    TrainingFamily(r, &j, &t);
  if (r.Chance(family == "none" ? 0.7 : 0.45)) AddDecoys(r, &j, &t);
  c.jobs.push_back(std::move(j));
  c.truth_json = TruthJson(t, c);
  return c;
}

}  // namespace mt::launch::sim
