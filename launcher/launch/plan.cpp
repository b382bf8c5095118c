#include "launcher/launch/plan.h"

#include "base/sha256.h"
#include "launcher/launch/backend.h"
#include "launcher/launch/env_policy.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <random>
#include <sstream>

namespace mt::launch {
namespace fs = std::filesystem;
using base::Errc;
using base::Status;
using nlohmann::json;

std::string ShellQuote(const std::string& arg) {
  if (arg.empty()) return "''";
  bool plain = true;
  for (char c : arg)
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-_./=:,+@%").find(c) != std::string_view::npos);
  if (plain) return arg;
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string ShellJoin(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + ShellQuote(a);
  return s;
}

std::string MakeExpTag(const std::string& tag, const std::vector<std::string>& passthrough) {
  std::string t = tag;
  for (const auto& a : passthrough) {
    if (a.empty()) continue;
    std::string x = a;
    if (x.rfind("--", 0) == 0) x = x.substr(2);
    else if (x.rfind("-", 0) == 0) x = x.substr(1);
    for (char& c : x) if (c == '=') c = '_';
    t += (t.empty() ? "" : "-") + x;
  }
  // A job name becomes a file name, a Slurm job name and part of sbatch's --output pattern:
  // anything but [A-Za-z0-9._-] (a '/', '%', a quote, a space …) becomes '_' there. The
  // argument itself reaches the training command unchanged.
  for (char& c : t)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  return t;
}

std::string JobDirName(const Plan& p, const std::string& job_id) { return job_id + "-" + p.job_name; }

json Plan::ToJson() const {
  json j;
  j["schema"] = "mt.plan/1";
  j["backend"] = backend;
  j["model"] = {{"requested", requested_model}, {"name", spec.model}, {"alias", spec.alias}, {"tag", spec.tag},
                {"settings", model}};
  j["exp_tag"] = exp_tag;
  j["job_name"] = job_name;
  j["job_id"] = job_id;
  j["nodes"] = nodes;
  j["scheduler_args"] = scheduler_args;
  j["passthrough"] = passthrough;
  j["overrides"] = overrides;
  j["env"] = env;
  j["train_command"] = train_command;
  j["submit_argv"] = submit_argv;
  j["paths"] = {{"workspace", workspace.string()}, {"artifact", artifact_dir.string()}, {"job_dir", job_dir.string()},
                {"log", log_path.string()}, {"models", models_dir.string()}, {"repo", repo_dir.string()}};
  j["binaries"] = binaries;
  j["observe"] = {{"enabled", observe}, {"exporter_port", exporter_port},
                  {"prometheus_ports", {prometheus_port_first, prometheus_port_last}},
                  {"scrape_interval_s", scrape_interval_s}};
  j["pack_tasks"] = pack_tasks;
  j["stage_timeouts"] = stage_timeouts;
  j["created"] = created;
  if (restart) {
    j["restart"] = {{"parent_job", restart->parent_job}, {"attempt", restart->attempt}, {"exclude", restart->exclude}};
    j["restart"]["resume_step"] = restart->resume_step ? json(*restart->resume_step) : json(nullptr);
  }
  j["hash"] = hash;
  return j;
}

std::string Plan::ComputeHash() const {
  json j = ToJson();
  j.erase("hash");
  return base::Sha256Hex(j.dump());
}

Status PlanFromJson(const json& j, Plan* p) {
  try {
    if (j.value("schema", "") != "mt.plan/1") return Status(Errc::kInvalid, "not an mt plan (schema mt.plan/1)");
    p->backend = j.at("backend");
    p->requested_model = j.at("model").at("requested");
    p->spec = {j["model"].at("name"), j["model"].at("alias"), j["model"].at("tag")};
    p->model = j["model"].at("settings").get<std::map<std::string, std::string>>();
    p->exp_tag = j.at("exp_tag");
    p->job_name = j.at("job_name");
    p->job_id = j.at("job_id");
    p->nodes = j.at("nodes");
    p->scheduler_args = j.at("scheduler_args").get<std::vector<std::string>>();
    p->passthrough = j.at("passthrough").get<std::vector<std::string>>();
    p->overrides = j.at("overrides").get<std::vector<std::string>>();
    p->env = j.at("env").get<std::map<std::string, std::string>>();
    p->train_command = j.at("train_command").get<std::vector<std::string>>();
    p->submit_argv = j.at("submit_argv").get<std::vector<std::string>>();
    const auto& paths = j.at("paths");
    p->workspace = paths.at("workspace").get<std::string>();
    p->artifact_dir = paths.at("artifact").get<std::string>();
    p->job_dir = paths.at("job_dir").get<std::string>();
    p->log_path = paths.at("log").get<std::string>();
    p->models_dir = paths.at("models").get<std::string>();
    p->repo_dir = paths.at("repo").get<std::string>();
    p->binaries = j.at("binaries").get<std::map<std::string, std::string>>();
    const auto& o = j.at("observe");
    p->observe = o.at("enabled");
    p->exporter_port = o.at("exporter_port");
    p->prometheus_port_first = o.at("prometheus_ports").at(0);
    p->prometheus_port_last = o.at("prometheus_ports").at(1);
    p->scrape_interval_s = o.at("scrape_interval_s");
    p->pack_tasks = j.at("pack_tasks");
    p->stage_timeouts = j.at("stage_timeouts").get<std::map<std::string, int>>();
    p->created = j.at("created");
    if (j.contains("restart")) {
      const json& r = j["restart"];
      PlanRestart restart;
      restart.parent_job = r.at("parent_job");
      restart.attempt = r.at("attempt");
      restart.exclude = r.at("exclude").get<std::vector<std::string>>();
      if (!r.at("resume_step").is_null()) restart.resume_step = r["resume_step"].get<int64_t>();
      p->restart = restart;
    }
    p->hash = j.at("hash");
  } catch (const std::exception& e) {
    return Status(Errc::kInvalid, std::string("malformed plan: ") + e.what());
  }
  if (p->ComputeHash() != p->hash) return Status(Errc::kInvalid, "plan content does not match its hash (edited after it was made?)");
  return Status::Ok();
}

static std::string NowStamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d_%H%M%S", &tm);
  return buf;
}

static std::string RandHex4() {
  std::random_device rd;
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04x", static_cast<unsigned>(rd() & 0xffff));
  return buf;
}

static bool ParsePositiveInt(const std::string& s, int* out) {
  try {
    size_t used = 0;
    const long v = std::stol(s, &used);
    if (used != s.size() || v < 1 || v > 100000000) return false;
    *out = static_cast<int>(v);
    return true;
  } catch (...) {
    return false;
  }
}

namespace {

bool PlainHostName(const std::string& h) {
  if (h.empty() || h.size() > 253 || h.front() == '-' || h.front() == '.') return false;
  for (char c : h)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) return false;
  return true;
}

// The restart's lineage into the plan: its environment, and the hosts it keeps off where the
// backend can (slurm: one --exclude, replacing any the parent carried, with the union).
Status ApplyRestart(const PlanRestart& r, Plan* p) {
  if (r.parent_job.empty() || r.parent_job.size() > 255 || r.parent_job.find('/') != std::string::npos)
    return Status(Errc::kInvalid, "a restart needs the parent job's id");
  if (r.attempt < 1 || r.attempt > 1000) return Status(Errc::kInvalid, "restart attempt must be 1..1000");
  if (r.resume_step && *r.resume_step < 0) return Status(Errc::kInvalid, "resume step must be >= 0");
  for (const auto& h : r.exclude)
    if (!PlainHostName(h)) return Status(Errc::kInvalid, "'" + h + "' is not a host name to exclude");
  if (!r.exclude.empty() && p->backend != "slurm")
    return Status(Errc::kInvalid, "the " + p->backend + " backend cannot keep a job off hosts (only slurm has --exclude)");
  p->restart = r;
  p->env["MT_RESTART_OF"] = r.parent_job;
  p->env["MT_RESTART_ATTEMPT"] = std::to_string(r.attempt);
  if (r.resume_step) p->env["MT_RESUME_STEP"] = std::to_string(*r.resume_step);
  if (!r.exclude.empty()) {
    // The user's own exclusion (--exclude=V, --exclude V, -xV, -x V) is kept, joined with ours.
    std::vector<std::string> args, lists;
    auto add = [&lists](const std::string& value) {   // "a,b[1-3],c": split at commas outside brackets
      int depth = 0;
      std::string item;
      for (char c : value + ",") {
        depth += c == '[' ? 1 : c == ']' ? -1 : 0;
        if (c != ',' || depth > 0) { item += c; continue; }
        if (!item.empty() && std::find(lists.begin(), lists.end(), item) == lists.end()) lists.push_back(item);
        item.clear();
      }
    };
    const auto& in = p->scheduler_args;
    for (size_t i = 0; i < in.size(); ++i) {
      const std::string& a = in[i];
      if (a.rfind("--exclude=", 0) == 0) add(a.substr(10));
      else if ((a == "--exclude" || a == "-x") && i + 1 < in.size()) add(in[++i]);
      else if (a.rfind("-x", 0) == 0 && a.size() > 2) add(a.substr(2));
      else args.push_back(a);
    }
    for (const auto& h : r.exclude) add(h);
    std::string list;
    for (const auto& h : lists) list += (list.empty() ? "" : ",") + h;
    args.push_back("--exclude=" + list);
    p->scheduler_args = std::move(args);
  }
  return Status::Ok();
}

}  // namespace

Status BuildPlan(const PlanRequest& req, Plan* out) {
  Plan p;
  const Backend* backend = FindBackend(req.backend);
  if (backend == nullptr) return Status(Errc::kInvalid, "unknown backend '" + req.backend + "' (" + BackendNamesText() + ")");
  if (req.nodes < 1 || req.nodes > 4096) return Status(Errc::kInvalid, "node count must be 1..4096");
  std::error_code ec;
  if (req.workspace.empty() || !fs::is_directory(req.workspace, ec))
    return Status(Errc::kNotFound, "workspace " + req.workspace.string() + " does not exist (create it or pass --workspace DIR)");
  p.backend = req.backend;
  p.requested_model = req.model_spec;
  if (Status st = ParseModelSpec(req.model_spec, &p.spec); !st.ok()) return st;
  std::string resolved, err;
  if (!ResolveModelName(req.models_dir, p.spec.model, &resolved, &err)) return Status(Errc::kNotFound, err);
  p.spec.model = resolved;
  ModelConfig mc;
  if (Status st = LoadModelConfig(req.models_dir, resolved, &mc); !st.ok()) return st;

  for (const auto& a : req.passthrough)
    if (!a.empty()) p.passthrough.push_back(a);   // empty args are dropped, as submit.sh does
  p.env = mc.env;
  int steps = mc.steps, pdbs = mc.per_device_batch_size, len = mc.max_target_length;
  for (const auto& a : p.passthrough) {
    if (a.find('\0') != std::string::npos) return Status(Errc::kInvalid, "passthrough argument contains a NUL byte");
    if (a.rfind("_env_", 0) == 0) {
      const auto eq = a.find('=');
      const std::string key = eq == std::string::npos ? "" : a.substr(5, eq - 5);
      bool ok = !key.empty() && !std::isdigit(static_cast<unsigned char>(key[0]));
      for (char c : key) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
      if (!ok) return Status(Errc::kInvalid, "passthrough '" + a + "': _env_ arguments must be _env_KEY=VALUE with KEY of [A-Za-z0-9_]");
      if (Status st = CheckEnvPassthroughKey(key); !st.ok()) return st.In("passthrough '" + a + "'");
      std::string v = a.substr(eq + 1);
      if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
      p.env[key] = v;
      continue;
    }
    p.overrides.push_back(a);
    const auto eq = a.find('=');
    if (eq == std::string::npos) continue;
    const std::string k = a.substr(0, eq), v = a.substr(eq + 1);
    int* target = k == "steps" ? &steps : k == "per_device_batch_size" ? &pdbs : k == "max_target_length" ? &len : nullptr;
    if (target && !ParsePositiveInt(v, target)) return Status(Errc::kInvalid, "passthrough '" + a + "': " + k + " needs a positive integer");
  }
  p.model = {{"steps", std::to_string(steps)}, {"per_device_batch_size", std::to_string(pdbs)},
             {"max_target_length", std::to_string(len)}, {"gpus_per_node", std::to_string(mc.gpus_per_node)},
             {"moe", mc.moe ? "true" : "false"}, {"config", mc.file.string()}};
  if (mc.tgs_high > 0) {
    std::ostringstream band;
    band << mc.tgs_low << "-" << mc.tgs_high;
    p.model["tgs_band"] = band.str();
  }
  for (const auto& [k, v] : mc.parallelism) p.model["parallelism." + k] = v;

  p.exp_tag = MakeExpTag(p.spec.tag, p.passthrough);
  p.job_name = "JAX-" + p.spec.model + (p.exp_tag.empty() ? "" : "-" + p.exp_tag);
  if (p.job_name.size() > kMaxJobNameBytes)
    return Status(Errc::kInvalid, "job name is " + std::to_string(p.job_name.size()) + " bytes, over the limit of " +
           std::to_string(kMaxJobNameBytes) + " (a path segment must fit in 255 bytes); use fewer or shorter passthrough args");

  p.nodes = req.nodes;
  p.scheduler_args = req.scheduler_args;
  if (!backend->takes_scheduler_args() && !p.scheduler_args.empty())
    return Status(Errc::kInvalid, "the " + p.backend + " backend takes no scheduler arguments (got '" + p.scheduler_args[0] + "')");
  p.created = req.now_utc.empty() ? NowStamp() : req.now_utc;
  const std::string rnd = req.rand_hex.empty() ? RandHex4() : req.rand_hex;
  p.workspace = fs::absolute(req.workspace).lexically_normal();
  if (p.workspace.has_filename() == false) p.workspace = p.workspace.parent_path();
  p.models_dir = fs::absolute(req.models_dir).lexically_normal();
  p.repo_dir = req.repo_dir.empty() ? fs::path() : fs::absolute(req.repo_dir).lexically_normal();
  p.artifact_dir = p.workspace / ".artifacts" / ("artifact_" + p.created + "_" + rnd);
  p.job_id = backend->JobIdBeforeSubmit(p, rnd);
  const std::string id = p.job_id.empty() ? "%j" : p.job_id;
  p.job_dir = p.workspace / JobDirName(p, id);
  p.log_path = p.workspace / (JobDirName(p, id) + ".log");

  if (req.mt_job.empty()) return Status(Errc::kNotFound, "cannot find the mt-job binary (set MT_JOB_BIN)");
  p.binaries["mt-job"] = req.mt_job;
  p.train_command = mc.train_command;
  if (p.train_command.empty()) {
    if (req.simtrain.empty()) return Status(Errc::kNotFound, "model " + p.spec.model + " has no train_command and mt-simtrain was not found (set MT_SIMTRAIN)");
    p.binaries["mt-simtrain"] = req.simtrain;
    p.train_command = {req.simtrain, "--realtime", "--rank", "auto", "--scenario", "{ARTIFACT}/scenario.yaml",
                       "--out", "{OUTPUT_PATH}", "--fake-root", "{JOB_DIR}/fake_root/{HOST}", "--event-host", "{HOST}",
                       "--step-seconds", "{SIM_STEP_SECONDS}", "--startup-seconds", "{SIM_STARTUP_SECONDS}"};
    p.env.emplace("SIM_STEP_SECONDS", "0.5");
    p.env.emplace("SIM_STARTUP_SECONDS", "1");
  }
  p.observe = req.observe;
  p.exporter_port = req.exporter_port;
  p.prometheus_port_first = req.prometheus_port_first;
  p.prometheus_port_last = req.prometheus_port_last;
  p.scrape_interval_s = req.scrape_interval_s;
  if (p.observe) {
    if (req.mt_exporter.empty()) return Status(Errc::kNotFound, "--observe needs mt-exporter (not found; set MT_EXPORTER_BIN)");
    if (req.prometheus.empty()) return Status(Errc::kNotFound, "--observe needs prometheus (not found in PATH; set MT_PROMETHEUS_BIN)");
    if (p.prometheus_port_first < 1 || p.prometheus_port_last > 65535 || p.prometheus_port_first > p.prometheus_port_last)
      return Status(Errc::kInvalid, "bad Prometheus port range");
    if (p.scrape_interval_s < 1) return Status(Errc::kInvalid, "scrape interval must be >= 1 s");
    p.binaries["mt-exporter"] = req.mt_exporter;
    p.binaries["prometheus"] = req.prometheus;
  }
  p.pack_tasks = req.pack_tasks;
  p.stage_timeouts = {{"train", -1}};
  for (const auto& [k, v] : req.stage_timeouts) {
    if (k != "train") return Status(Errc::kInvalid, "unknown stage '" + k + "' (this launcher runs one stage: train)");
    if (v == 0) return Status(Errc::kInvalid, "a stage timeout of 0 is not allowed (use none or -1 for no timeout)");
    p.stage_timeouts[k] = v;
  }

  if (req.restart) {
    if (Status st = ApplyRestart(*req.restart, &p); !st.ok()) return st;
  }
  p.submit_argv = backend->SubmitCommand(p);
  p.hash = p.ComputeHash();
  *out = std::move(p);
  return Status::Ok();
}

std::string DescribePlan(const Plan& p) {
  std::ostringstream o;
  o << "Plan " << p.hash.substr(0, 16) << " (sha256 " << p.hash << ")\n"
    << "  backend:      " << p.backend << (p.pack_tasks ? " (tasks packed on one node)" : "") << "\n"
    << "  model:        " << p.spec.model << (p.requested_model != p.spec.model ? "  (from '" + p.requested_model + "')" : "")
    << (p.spec.alias.empty() ? "" : "  alias " + p.spec.alias) << "\n"
    << "  job name:     " << p.job_name << " (" << p.job_name.size() << " bytes)\n"
    << "  job id:       " << (p.job_id.empty() ? "(assigned by the scheduler)" : p.job_id) << "\n"
    << "  nodes:        " << p.nodes << "\n"
    << "  settings:    ";
  for (const auto& [k, v] : p.model) if (k != "config") o << " " << k << "=" << v;
  o << "\n  passthrough:  " << (p.passthrough.empty() ? "(none)" : ShellJoin(p.passthrough)) << "\n";
  if (!p.env.empty()) {
    o << "  environment: ";
    for (const auto& [k, v] : p.env) o << " " << k << "=" << ShellQuote(v);
    o << "\n";
  }
  o << "  observe:      " << (p.observe ? "yes (mt-exporter :" + std::to_string(p.exporter_port) + " per node, Prometheus :" +
                                               std::to_string(p.prometheus_port_first) + "-" +
                                               std::to_string(p.prometheus_port_last) + " on node 0)"
                                         : "no")
    << "\n  artifact:     " << p.artifact_dir.string() << "\n"
    << "  job dir:      " << p.job_dir.string() << "\n"
    << "  log:          " << p.log_path.string() << "\n"
    << "  submit:       " << ShellJoin(p.submit_argv) << "\n"
    << "  train:        " << ShellJoin(p.train_command) << "\n";
  if (p.restart) {
    o << "  restart of:   job " << p.restart->parent_job << " (attempt " << p.restart->attempt
      << "): cancels it first if it still runs; resumes from "
      << (p.restart->resume_step ? "the checkpoint of step " + std::to_string(*p.restart->resume_step) : std::string("the start"))
      << "; excludes " << (p.restart->exclude.empty() ? std::string("no host") : ShellJoin(p.restart->exclude)) << "\n";
  }
  return o.str();
}

}  // namespace mt::launch
