#include "launcher/sim/scenario.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <set>

#include "base/hostlist.h"
#include "base/iso_time.h"

namespace mt::launch::sim {
namespace {

struct FaultName {
  FaultKind kind;
  const char* name;
};
constexpr FaultName kFaultNames[] = {
    {FaultKind::kHang, "hang"},
    {FaultKind::kOom, "oom"},
    {FaultKind::kNcclTimeout, "nccl_timeout"},
    {FaultKind::kHeartbeat, "heartbeat"},
    {FaultKind::kRdmaRetransmits, "rdma_retransmits"},
    {FaultKind::kThermal, "thermal"},
    {FaultKind::kNodeFail, "node_fail"},
    {FaultKind::kThreadLeak, "thread_leak"},
    {FaultKind::kMoeLbSpike, "moe_lb_spike"},
    {FaultKind::kCancel, "cancel"},
    {FaultKind::kTimeLimit, "time_limit"},
};

// Reads typed values out of a YAML map and remembers which keys were used, so unknown
// (misspelt) keys are reported instead of silently ignored.
class MapReader {
 public:
  MapReader(const YAML::Node& node, std::string where) : node_(node), where_(std::move(where)) {}

  template <typename T>
  bool Get(const char* key, T* out) {
    used_.insert(key);
    const YAML::Node v = node_[key];
    if (!v) return true;
    try {
      *out = v.as<T>();
    } catch (const YAML::Exception&) {
      error_ = where_ + "." + key + ": expected " + TypeName<T>();
      return false;
    }
    return true;
  }

  bool CheckUnknown() {
    for (const auto& kv : node_) {
      const std::string k = kv.first.as<std::string>();
      if (!used_.count(k)) {
        error_ = where_ + ": unknown key '" + k + "'";
        return false;
      }
    }
    return true;
  }

  const std::string& error() const { return error_; }

 private:
  template <typename T>
  static const char* TypeName() {
    if constexpr (std::is_same_v<T, bool>) return "true or false";
    else if constexpr (std::is_integral_v<T>) return "an integer";
    else if constexpr (std::is_floating_point_v<T>) return "a number";
    else if constexpr (std::is_same_v<T, std::string>) return "a string";
    else return "a list";
  }

  const YAML::Node& node_;
  std::string where_;
  std::set<std::string> used_;
  std::string error_;
};

std::string TransformPassthrough(const std::string& arg) {
  std::string a = arg;
  if (a.rfind("--", 0) == 0) a = a.substr(2);
  else if (a.rfind("-", 0) == 0) a = a.substr(1);
  for (char& c : a)
    if (c == '=') c = '_';
  return a;
}

bool ParseFault(const YAML::Node& node, size_t index, Fault* f, std::string* error) {
  const std::string where = "faults[" + std::to_string(index) + "]";
  if (!node.IsMap()) {
    *error = where + ": expected a map";
    return false;
  }
  MapReader r(node, where);
  std::string kind;
  std::vector<int64_t> steps;
  bool ok = r.Get("kind", &kind) && r.Get("step", &f->step) && r.Get("steps", &steps) &&
            r.Get("hosts", &f->hosts) && r.Get("gpus", &f->gpus) && r.Get("tasks", &f->tasks) &&
            r.Get("tgs", &f->tgs) && r.Get("tgs_factor", &f->tgs_factor) &&
            r.Get("ramp_steps", &f->ramp_steps) && r.Get("retx_per_s", &f->retx_per_s) &&
            r.Get("duration_s", &f->duration_s) && r.Get("then", &f->then) &&
            r.Get("timeout_s", &f->timeout_s) && r.Get("real_death", &f->real_death) &&
            r.Get("crash_delay_s", &f->crash_delay_s) && r.Get("exit_code", &f->exit_code) &&
            r.Get("extra_procs", &f->extra_procs) && r.Get("extra_init_waves", &f->extra_init_waves) &&
            r.Get("decline_to", &f->decline_to) && r.Get("decline_steps", &f->decline_steps) &&
            r.Get("lb_peak", &f->lb_peak) && r.Get("temperature_c", &f->temperature_c) &&
            r.CheckUnknown();
  if (!ok) {
    *error = r.error();
    return false;
  }
  bool known = false;
  for (const auto& n : kFaultNames) {
    if (kind == n.name) {
      f->kind = n.kind;
      known = true;
    }
  }
  if (!known) {
    std::string names;
    for (const auto& n : kFaultNames) names += std::string(names.empty() ? "" : ", ") + n.name;
    *error = where + ".kind: '" + kind + "' is not one of " + names;
    return false;
  }
  if (!steps.empty()) {
    if (steps.size() != 2 || steps[1] < steps[0]) {
      *error = where + ".steps: expected [first, last] with first <= last";
      return false;
    }
    f->step = steps[0];
    f->end_step = steps[1];
  }
  if (f->step < 0) {
    *error = where + ".step: must be >= 0";
    return false;
  }
  const bool needs_hosts = f->kind == FaultKind::kRdmaRetransmits || f->kind == FaultKind::kThermal ||
                           f->kind == FaultKind::kNodeFail;
  if (needs_hosts && f->hosts.empty()) {
    *error = where + ".hosts: required for " + kind;
    return false;
  }
  if (f->kind == FaultKind::kHeartbeat && f->tasks.empty()) {
    *error = where + ".tasks: required for heartbeat";
    return false;
  }
  if (f->then != "none" && f->then != "cancel") {
    *error = where + ".then: expected none or cancel";
    return false;
  }
  if (f->duration_s < 0 || f->timeout_s <= 0 || f->tgs < 0 || f->tgs_factor <= 0 || f->decline_to <= 0) {
    *error = where + ": durations, timeouts and TGS values must be positive";
    return false;
  }
  return true;
}

}  // namespace

const char* FaultKindName(FaultKind kind) {
  for (const auto& n : kFaultNames)
    if (n.kind == kind) return n.name;
  return "?";
}

double Scenario::PeakTflops() const {
  if (peak_tflops > 0) return peak_tflops;
  const bool fp8 = dtype == "fp8";
  if (gpu == "MI355X") return fp8 ? 5000 : 2500;
  if (gpu == "MI300X" || gpu == "MI325X") return fp8 ? 2614 : 1307;
  if (gpu == "H100" || gpu == "H200") return fp8 ? 1979 : 989;
  if (gpu == "B200") return fp8 ? 4500 : 2250;
  return 0;  // unknown GPU: MFU is not printed, as the original patch does
}

std::string Scenario::ExpTag() const {
  std::string tag = exp_tag;
  for (const auto& a : passthrough) {
    if (a.empty()) continue;
    if (!tag.empty()) tag += "-";
    tag += TransformPassthrough(a);
  }
  return tag;
}

std::string Scenario::JobName() const {
  const std::string tag = ExpTag();
  return "JAX-" + model + (tag.empty() ? "" : "-" + tag);
}

std::string Scenario::RunName() const { return run_name.empty() ? model + "_" + job_id : run_name; }

const Fault* Scenario::Find(FaultKind kind) const {
  for (const auto& f : faults)
    if (f.kind == kind) return &f;
  return nullptr;
}

bool ParseIsoTime(const std::string& text, double* out) {
  int y, mo, d, h, mi;
  double s;
  char z = 0;
  int n = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%lf%c%n", &y, &mo, &d, &h, &mi, &s, &z, &n) != 7 ||
      z != 'Z' || static_cast<size_t>(n) != text.size())
    return false;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s < 0 || s >= 61 || y < 1970) return false;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  *out = static_cast<double>(timegm(&tm)) + s;
  return true;
}

std::string FormatIsoTime(double t) { return base::FormatIso8601(static_cast<int64_t>(std::floor(t))); }

namespace {

// The sections of a scenario file. Each reports what is wrong in `msg` (without the
// source prefix) and returns false.

bool CheckTopLevelKeys(YAML::Node& root, std::string* msg) {
  for (const auto& kv : root) {
    const std::string k = kv.first.as<std::string>();
    if (k != "job" && k != "training" && k != "hardware" && k != "faults" && k != "profile" && k != "description") {
      *msg = "unknown top-level key '" + k + "'";
      return false;
    }
  }
  return true;
}

// job: what is checked once the map was read (hosts, start and anchor come as text).
bool CheckJob(Scenario& s, const std::string& hosts, const std::string& start, int64_t anchor_step,
              const std::string& anchor_time, std::string* msg) {
  auto fail = [&](const std::string& m) {
    *msg = m;
    return false;
  };
  if (s.job_id.empty()) return fail("job.id: required");
  for (char c : s.job_id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-')
      return fail("job.id: only letters, digits, '_' and '-' are allowed");
  if (s.model.empty()) return fail("job.model: required");
  for (char c : s.model)
    if (c == '/' || c == '\0') return fail("job.model: must not contain '/'");
  if (hosts.empty()) return fail("job.hosts: required (Slurm compact form, e.g. node[001-004])");
  if (!base::ExpandHostList(hosts, &s.hosts)) return fail("job.hosts: malformed host list '" + hosts + "'");
  if (s.hosts.size() > 4096) return fail("job.hosts: more than 4096 hosts");
  std::set<std::string> unique(s.hosts.begin(), s.hosts.end());
  if (unique.size() != s.hosts.size()) return fail("job.hosts: duplicate host names");
  for (const auto& h : s.hosts)
    if (h.find('/') != std::string::npos) return fail("job.hosts: host names must not contain '/'");
  if (s.gpus_per_node < 1 || s.gpus_per_node > 16) return fail("job.gpus_per_node: must be 1..16");
  if (start.empty() || !ParseIsoTime(start, &s.start)) return fail("job.start: expected YYYY-MM-DDTHH:MM:SSZ");
  if (anchor_step >= 0) {
    if (!ParseIsoTime(anchor_time, &s.anchor_time)) return fail("job.anchor_time: expected YYYY-MM-DDTHH:MM:SSZ");
    s.has_anchor = true;
    s.anchor_step = anchor_step;
  }
  if (s.dtype != "bf16" && s.dtype != "fp8") return fail("job.dtype: expected bf16 or fp8");
  if (s.JobName().size() > 243) return fail("job: the job name would exceed 243 bytes");
  return true;
}

bool ParseJobSection(YAML::Node& root, Scenario& s, std::string* msg) {
  const YAML::Node job = root["job"];
  if (!job || !job.IsMap()) {
    *msg = "job: required map";
    return false;
  }
  MapReader r(job, "job");
  std::string hosts, start, anchor_time;
  int64_t anchor_step = -1;
  if (!(r.Get("id", &s.job_id) && r.Get("model", &s.model) && r.Get("alias", &s.alias) &&
        r.Get("exp_tag", &s.exp_tag) && r.Get("passthrough", &s.passthrough) && r.Get("hosts", &hosts) &&
        r.Get("gpus_per_node", &s.gpus_per_node) && r.Get("start", &start) &&
        r.Get("anchor_step", &anchor_step) && r.Get("anchor_time", &anchor_time) && r.Get("seed", &s.seed) &&
        r.Get("ray", &s.ray) && r.Get("gpu", &s.gpu) && r.Get("dtype", &s.dtype) &&
        r.Get("peak_tflops", &s.peak_tflops) && r.Get("jax_port", &s.jax_port) && r.Get("user", &s.user) &&
        r.CheckUnknown())) {
    *msg = r.error();
    return false;
  }
  return CheckJob(s, hosts, start, anchor_step, anchor_time, msg);
}

bool ParseTrainingSection(YAML::Node& root, Scenario& s, std::string* msg) {
  auto fail = [&](const std::string& m) {
    *msg = m;
    return false;
  };
  if (const YAML::Node t = root["training"]) {
    MapReader r(t, "training");
    if (!(r.Get("steps", &s.steps) && r.Get("first_step", &s.first_step) && r.Get("stop_step", &s.stop_step) &&
          r.Get("running", &s.running) && r.Get("per_device_batch_size", &s.per_device_batch_size) &&
          r.Get("max_target_length", &s.max_target_length) && r.Get("tgs", &s.tgs) &&
          r.Get("tgs_noise", &s.tgs_noise) && r.Get("flops_per_token", &s.flops_per_token) &&
          r.Get("loss_start", &s.loss_start) && r.Get("loss_end", &s.loss_end) &&
          r.Get("checkpoint_period", &s.checkpoint_period) && r.Get("checkpoint_save_s", &s.checkpoint_save_s) &&
          r.Get("compile_s", &s.compile_s) && r.Get("init_s", &s.init_s) && r.Get("restore_s", &s.restore_s) &&
          r.Get("moe", &s.moe) && r.Get("init_waves", &s.init_waves) && r.Get("run_name", &s.run_name) &&
          r.Get("quantization", &s.quantization) && r.Get("single_replica_restore", &s.single_replica_restore) &&
          r.CheckUnknown()))
      return fail(r.error());
  }
  if (s.steps < 1 || s.steps > 10000000) return fail("training.steps: must be 1..10000000");
  if (s.first_step < 0 || s.first_step >= s.steps) return fail("training.first_step: must be in [0, steps)");
  if (s.stop_step >= s.steps) return fail("training.stop_step: must be < steps");
  if (s.stop_step >= 0 && s.stop_step < s.first_step) return fail("training.stop_step: must be >= first_step");
  if (s.tgs <= 0 || s.per_device_batch_size < 1 || s.max_target_length < 1 || s.flops_per_token <= 0)
    return fail("training: tgs, per_device_batch_size, max_target_length and flops_per_token must be positive");
  if (s.tgs_noise < 0 || s.tgs_noise > 0.5) return fail("training.tgs_noise: must be in [0, 0.5]");
  if (s.checkpoint_period < 0) return fail("training.checkpoint_period: must be >= 0");
  if (s.compile_s <= 0 || s.init_s <= 0 || s.restore_s < 0 || s.checkpoint_save_s < 0)
    return fail("training: compile_s and init_s must be positive");
  if (s.init_waves < 1 || s.init_waves > 20) return fail("training.init_waves: must be 1..20");
  if (!s.quantization.empty() && s.quantization != "fp8") return fail("training.quantization: expected fp8");
  return true;
}

bool ParseProfileSection(YAML::Node& root, Scenario& s, std::string* msg) {
  auto fail = [&](const std::string& m) {
    *msg = m;
    return false;
  };
  if (const YAML::Node p = root["profile"]) {
    MapReader r(p, "profile");
    if (!(r.Get("first_step", &s.profile_first_step) && r.Get("steps", &s.profile_steps) &&
          r.Get("compute_share", &s.profile_compute_share) && r.Get("exposed_comm_share", &s.profile_exposed_comm_share) &&
          r.Get("slow_gpu", &s.profile_slow_gpu) && r.Get("slow_pct", &s.profile_slow_pct) && r.Get("layers", &s.layers) &&
          r.CheckUnknown()))
      return fail(r.error());
  }
  if (s.profile_steps < 0 || s.profile_steps > 20) return fail("profile.steps: must be 0..20");
  if (s.profile_first_step < 0) return fail("profile.first_step: must be >= 0");
  if (s.profile_compute_share <= 0 || s.profile_exposed_comm_share < 0 ||
      s.profile_compute_share + s.profile_exposed_comm_share >= 1)
    return fail("profile: compute_share > 0, exposed_comm_share >= 0 and their sum < 1");
  if (s.profile_slow_gpu >= s.gpus_per_node) return fail("profile.slow_gpu: must be < job.gpus_per_node");
  if (s.profile_slow_pct < 0 || s.profile_slow_pct > 500) return fail("profile.slow_pct: must be 0..500");
  if (s.layers < 0 || s.layers > 1000) return fail("profile.layers: must be 0..1000");
  return true;
}

bool ParseHardwareSection(YAML::Node& root, Scenario& s, std::string* msg) {
  auto fail = [&](const std::string& m) {
    *msg = m;
    return false;
  };
  if (const YAML::Node hw = root["hardware"]) {
    MapReader r(hw, "hardware");
    if (!(r.Get("power_active_w", &s.power_active_w) && r.Get("power_busywait_w", &s.power_busywait_w) &&
          r.Get("power_idle_w", &s.power_idle_w) && r.Get("procs_running", &s.procs_running) &&
          r.Get("nics", &s.nics) && r.Get("scrape_interval_s", &s.scrape_interval_s) && r.CheckUnknown()))
      return fail(r.error());
  }
  if (s.nics < 0 || s.nics > 16) return fail("hardware.nics: must be 0..16");
  if (s.scrape_interval_s < 1 || s.scrape_interval_s > 600) return fail("hardware.scrape_interval_s: must be 1..600");
  return true;
}

// The hosts, tasks and GPUs fault `i` names exist in the job.
bool CheckFaultTargets(const Scenario& s, const Fault& f, size_t i, std::string* msg) {
  auto fail = [&](const std::string& m) {
    *msg = m;
    return false;
  };
  for (const auto& h : f.hosts) {
    bool found = false;
    for (const auto& jh : s.hosts) found = found || jh == h;
    if (!found) return fail("faults[" + std::to_string(i) + "].hosts: '" + h + "' is not in job.hosts");
  }
  for (int task : f.tasks)
    if (task < 0 || task >= static_cast<int>(s.hosts.size()))
      return fail("faults[" + std::to_string(i) + "].tasks: task " + std::to_string(task) + " does not exist");
  for (int g : f.gpus)
    if (g < 0 || g >= s.gpus_per_node)
      return fail("faults[" + std::to_string(i) + "].gpus: GPU " + std::to_string(g) + " does not exist");
  return true;
}

bool ParseFaultsSection(YAML::Node& root, Scenario& s, std::string* msg) {
  if (const YAML::Node faults = root["faults"]) {
    if (!faults.IsSequence()) {
      *msg = "faults: expected a list";
      return false;
    }
    for (size_t i = 0; i < faults.size(); ++i) {
      Fault f;
      std::string err;
      if (!ParseFault(faults[i], i, &f, &err)) {
        *msg = err;
        return false;
      }
      if (!CheckFaultTargets(s, f, i, msg)) return false;
      s.faults.push_back(f);
    }
  }
  int terminal = 0;
  for (const auto& f : s.faults) {
    switch (f.kind) {
      case FaultKind::kHang: case FaultKind::kOom: case FaultKind::kNcclTimeout: case FaultKind::kHeartbeat:
      case FaultKind::kNodeFail: case FaultKind::kCancel: case FaultKind::kTimeLimit:
        ++terminal;
        break;
      default:
        break;
    }
  }
  if (terminal > 1) {
    *msg = "faults: at most one fault may end the job (hang, oom, nccl_timeout, heartbeat, node_fail, cancel, time_limit)";
    return false;
  }
  return true;
}

}  // namespace

bool ParseScenario(const std::string& yaml_text, const std::string& source, Scenario* out,
                   std::string* error) {
  const std::string prefix = source.empty() ? "" : source + ": ";
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    *error = prefix + "invalid YAML: " + e.what();
    return false;
  }
  if (!root.IsMap()) {
    *error = prefix + "expected a map with job, training, hardware and faults";
    return false;
  }
  Scenario s;
  std::string msg;
  if (!CheckTopLevelKeys(root, &msg) || !ParseJobSection(root, s, &msg) || !ParseTrainingSection(root, s, &msg) ||
      !ParseHardwareSection(root, s, &msg) || !ParseFaultsSection(root, s, &msg) || !ParseProfileSection(root, s, &msg)) {
    *error = prefix + msg;
    return false;
  }
  *out = std::move(s);
  return true;
}

}  // namespace mt::launch::sim
