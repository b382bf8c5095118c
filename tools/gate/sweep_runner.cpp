#include "tools/gate/sweep_runner.h"

#include <chrono>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <thread>

#include "launcher/launch/model_config.h"
#include "launcher/launch/plan.h"
#include "launcher/launch/submit.h"
#include "mcp/request_state.h"
#include "tools/perf/perf_analysis.h"

namespace mt::tools {

namespace fs = std::filesystem;
namespace approval = launch::approval;

namespace {

struct Pending {
  SweepResult result;
  launch::Plan plan;
  approval::PolicyDecision decision;
  std::string plan_id;
  bool done = false;
  std::string last_state;
  std::filesystem::path log;
};

bool Running(const std::string& state) {
  static const std::set<std::string> running = {"RUNNING", "PENDING", "CONFIGURING", "COMPLETING", "SUSPENDED",
                                                "REQUEUED", "RESIZING", "UNKNOWN", ""};
  return running.count(state) > 0;
}

std::string Label(const SweepResult& r) {
  return r.model + " N=" + std::to_string(r.nodes) + " [" + r.state + "]";
}

std::string Fixed1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

void Say(const SweepEnv& env, const std::string& line) {
  if (env.progress) env.progress(line);
}

bool Cancelled(const SweepEnv& env) { return env.cancelled && env.cancelled(); }

launch::PlanRequest RequestFor(const SweepSpec& spec, const SweepRun& run, int nodes, const SweepState& state,
                               const fs::path& models, const SweepEnv& env) {
  launch::PlanRequest req;
  req.model_spec = run.model + ":" + spec.name + "-" + state.name;
  req.backend = spec.backend;
  req.nodes = nodes;
  req.scheduler_args = spec.scheduler_args;
  req.passthrough = spec.passthrough;
  req.passthrough.insert(req.passthrough.end(), run.passthrough.begin(), run.passthrough.end());
  req.workspace = env.approval.workspace;
  req.models_dir = models;
  req.repo_dir = state.dir;
  if (const char* v = std::getenv("MT_SLURM_PACK_TASKS"); v && std::string(v) == "1") req.pack_tasks = true;
  launch::ResolveBinaries(&req);
  return req;
}

// 1. Every plan first: a spec error or a policy refusal stops the sweep before any job runs.
std::string PlanEveryRun(const SweepSpec& spec, const std::vector<SweepState>& states, const SweepEnv& env,
                         std::vector<Pending>* runs) {
  for (const auto& state : states) {
    fs::path models;
    try {
      models = StateModelsDir(state);
    } catch (const std::exception& e) {
      return e.what();
    }
    for (const auto& run : spec.runs) {
      for (int nodes : run.nodes) {
        launch::PlanRequest req = RequestFor(spec, run, nodes, state, models, env);
        Pending p;
        p.result.state = state.name;
        p.result.model = run.model;
        p.result.nodes = nodes;
        if (const base::Status st = launch::BuildPlan(req, &p.plan); !st.ok())
          return "cannot plan " + Label(p.result) + ": " + st.message() + "; nothing was submitted";
        p.decision = approval::EvaluatePolicy(env.approval.policy, "ci", p.plan);
        runs->push_back(std::move(p));
      }
    }
  }
  return "";
}

// The runs the ci policy refuses, each refusal audited; "" when it allows them all.
std::string RefuseDisallowed(const std::vector<Pending>& runs, const SweepEnv& env, const Actor& requester) {
  std::string refused;
  for (const auto& p : runs) {
    if (p.decision.allowed) continue;
    std::string why = Label(p.result) + ": " + p.decision.Explain();
    Refuse(env.approval, "sweep_submit", "", requester, why);
    refused += "\n  " + why;
  }
  if (!refused.empty()) return "the ci policy refuses these runs, so nothing was submitted:" + refused;
  return "";
}

// 2. Record, approve (by the policy, audited) and submit each plan through the gate.
std::string SubmitEveryRun(const SweepSpec& spec, const SweepEnv& env, const Actor& requester,
                           std::vector<Pending>& runs) {
  for (auto& p : runs) {
    if (Cancelled(env)) {
      p.result.status = "cancelled";
      p.result.detail = "the sweep was cancelled before this run was submitted";
      p.done = true;
      continue;
    }
    approval::PlanRecord rec;
    rec.kind = "submit";
    rec.plan = p.plan.ToJson();
    rec.hash = p.plan.hash;
    rec.summary = launch::DescribePlan(p.plan);
    rec.args_digest = mcp::RequestStateSealer::Digest(
        Json{{"sweep", spec.name}, {"state", p.result.state}, {"model", p.result.model}, {"nodes", p.result.nodes}});
    if (auto e = RecordPlan(env.approval, &rec, requester); !e.empty())
      return "cannot record the plan of " + Label(p.result) + ": " + e + "; later runs were not submitted";
    const Actor policy_actor{p.decision.rule.empty() ? "policy" : p.decision.rule, "ci"};
    std::string e = Decide(env.approval, rec.id, rec.hash, true, policy_actor, "policy", p.decision.Explain(), &rec);
    p.plan_id = rec.id;
    if (!e.empty() || rec.job_id.empty()) {
      p.result.status = "error";
      p.result.detail = "submit failed: " + (e.empty() ? rec.error : e);
      p.done = true;
      Say(env, Label(p.result) + ": " + p.result.detail);
      continue;
    }
    p.result.job_id = rec.job_id;
    Say(env, "submitted " + Label(p.result) + " as job " + rec.job_id + " (plan " + rec.id.substr(0, 8) + ", " +
                 p.decision.Explain() + ")");
  }
  return "";
}

// A job that ended: failed unless COMPLETED, else its steady TGS measured from its log.
void MeasureEndedRun(const SweepSpec& spec, const std::string& state, const nlohmann::json& st, Pending& p) {
  if (state != "COMPLETED") {
    p.result.status = "failed";
    p.result.detail = "job " + p.result.job_id + " ended " + state +
                      (st.contains("exit_code") && !st["exit_code"].is_null() ? " (exit " + st["exit_code"].dump() + ")" : "");
    return;
  }
  try {
    SteadyTgs tgs = SteadyTgsOfLog(p.log, spec.warmup_steps);
    if (!tgs.ok) {
      p.result.status = "error";
      p.result.detail = "job " + p.result.job_id + " completed but its log has no step with Tokens/s/device after warm-up";
    } else {
      p.result.status = "ok";
      p.result.tgs = tgs.mean;
      p.result.tgs_std = tgs.std;
      p.result.steps = tgs.steps;
      p.result.detail = p.log.string();
    }
  } catch (const std::exception& e) {
    p.result.status = "error";
    p.result.detail = std::string("cannot measure the log: ") + e.what();
  }
}

// One look at a job still running; measures it when it has ended (then --*left).
void PollRun(const SweepSpec& spec, const SweepEnv& env, size_t total, Pending& p, size_t* left) {
  nlohmann::json st;
  std::string state = "UNKNOWN";
  if (launch::JobStatus(env.approval.workspace, p.result.job_id, &st).ok()) {
    state = st.value("state", "UNKNOWN");
    if (st.contains("log") && st["log"].is_string()) p.log = st["log"].get<std::string>();
  }
  if (state != p.last_state) {
    p.last_state = state;
    if (Running(state)) Say(env, Label(p.result) + " job " + p.result.job_id + ": " + state);
  }
  if (Running(state)) return;
  p.done = true;
  --*left;
  MeasureEndedRun(spec, state, st, p);
  Say(env, Label(p.result) + " job " + p.result.job_id + ": " + state +
               (p.result.status == "ok" ? ", steady TGS " + Fixed1(p.result.tgs) + " over " + std::to_string(p.result.steps) + " steps"
                                        : " — " + p.result.detail) +
               " (" + std::to_string(total - *left) + "/" + std::to_string(total) + " done)");
}

// The sweep's time is up, or it was cancelled: cancel every job still running (audited:
// the requester acted, through the sweep).
void CancelUnfinished(const SweepSpec& spec, const SweepEnv& env, const Actor& requester, bool timed_out,
                      std::vector<Pending>& runs) {
  for (auto& p : runs) {
    if (p.done) continue;
    std::string msg;
    const base::Status st = launch::CancelJob(env.approval.workspace, p.result.job_id, &msg);   // ended meanwhile: nothing to cancel
    (void)AuditEvent(env.approval, "sweep_cancel", p.plan_id, requester,
                     {{"job", p.result.job_id}, {"why", timed_out ? "timeout" : "sweep cancelled"}, {"ok", st.ok()}});
    p.result.status = timed_out ? "timeout" : "cancelled";
    p.result.detail = timed_out ? "still " + p.last_state + " after the sweep's " + std::to_string(spec.timeout_s) + " s; cancelled"
                                : "the sweep was cancelled while the job was " + p.last_state + "; job cancelled";
    p.done = true;
    Say(env, Label(p.result) + " job " + p.result.job_id + ": " + p.result.detail);
  }
}

// 3. Wait for every job, measuring each as it ends.
void WaitForEveryRun(const SweepSpec& spec, const SweepEnv& env, const Actor& requester,
                     std::chrono::steady_clock::time_point started, std::vector<Pending>& runs) {
  const auto deadline = started + std::chrono::seconds(spec.timeout_s);
  size_t left = 0;
  for (const auto& p : runs) left += p.done ? 0 : 1;
  while (left > 0) {
    for (auto& p : runs) {
      if (p.done) continue;
      PollRun(spec, env, runs.size(), p, &left);
    }
    if (left == 0) break;
    if (Cancelled(env) || std::chrono::steady_clock::now() > deadline) {
      CancelUnfinished(spec, env, requester, !Cancelled(env), runs);
      break;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(env.poll_seconds));
  }
}

}  // namespace

fs::path StateModelsDir(const SweepState& state) {
  std::error_code ec;
  if (fs::is_directory(state.dir / "configs" / "models", ec)) return fs::absolute(state.dir / "configs" / "models");
  if (fs::is_directory(state.dir, ec))
    for (const auto& e : fs::directory_iterator(state.dir, ec))
      if (e.path().extension() == ".yml") return fs::absolute(state.dir);
  throw std::runtime_error("code state '" + state.name + "' (" + state.dir.string() +
                           "): neither configs/models/ nor a directory of model *.yml files");
}

std::string RunSweep(const SweepSpec& spec, const std::vector<SweepState>& states, const SweepEnv& env,
                     std::vector<SweepResult>* results) {
  const Actor requester{env.requester, "ci"};
  std::vector<Pending> runs;
  if (std::string e = PlanEveryRun(spec, states, env, &runs); !e.empty()) return e;
  if (std::string e = RefuseDisallowed(runs, env, requester); !e.empty()) return e;
  const auto started = std::chrono::steady_clock::now();
  if (std::string e = SubmitEveryRun(spec, env, requester, runs); !e.empty()) return e;
  WaitForEveryRun(spec, env, requester, started, runs);
  results->clear();
  for (auto& p : runs) results->push_back(p.result);
  return "";
}

}  // namespace mt::tools
