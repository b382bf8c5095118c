#include "tools/gate/restart_request.h"

#include "base/sha256.h"
#include "launcher/launch/restart_plan.h"
#include "launcher/launch/submit.h"

namespace mt::tools {
namespace approval = launch::approval;

namespace {

// The id for a job whose canonical id (JobStatus's "id") is known.
std::string PlanIdOf(const std::filesystem::path& workspace, const std::string& job_id) {
  std::error_code ec;
  std::filesystem::path ws = std::filesystem::weakly_canonical(workspace, ec);
  if (ec) ws = std::filesystem::absolute(workspace).lexically_normal();
  return base::Sha256Hex("mt restart\n" + ws.string() + "\n" + job_id).substr(0, 32);
}

// The plan the parent was submitted with: the approved record in the store when the gate
// submitted it (mt's own file, 0600), else the artifact's plan.json (mt submit at a terminal).
base::Status ParentPlan(const ApprovalEnv& env, const std::string& job_id, launch::Plan* out) {
  for (const approval::PlanRecord& rec : env.Store().List(approval::UnixNow()))
    if (rec.kind == "submit" && rec.state == "submitted" && rec.job_id == job_id) return launch::PlanFromJson(rec.plan, out);
  return launch::LoadJobPlan(env.workspace, job_id, out);
}

}  // namespace

std::string RestartPlanId(const std::filesystem::path& workspace, const std::string& parent_job) {
  Json st;
  if (!launch::JobStatus(workspace, parent_job, &st).ok()) return "";
  return PlanIdOf(workspace, st.value("id", parent_job));
}

std::string RequestRestart(const ApprovalEnv& env, const RestartRequest& r, const Actor& requester, approval::PlanRecord* out,
                           RestartOutcome* outcome) {
  *outcome = RestartOutcome{};
  // The parent's status, read once (on Slurm each read is an scontrol call).
  Json st;
  if (!launch::JobStatus(env.workspace, r.parent_job, &st).ok())
    return "job " + r.parent_job + " was not submitted by mt in this workspace: there is no plan to restart";
  const std::string parent_id = st.value("id", r.parent_job), state = st.value("state", "");
  approval::PlanRecord rec;
  rec.id = PlanIdOf(env.workspace, parent_id);
  auto store = env.Store();
  // Asked before: the plan recorded then is the one that counts, whatever its state.
  if (store.Get(rec.id, approval::UnixNow(), &rec).ok()) {
    *out = rec;
    if (rec.state != "pending") return "";
  } else {
    launch::Plan parent, plan;
    if (base::Status s = ParentPlan(env, parent_id, &parent); !s.ok()) return "cannot restart job " + parent_id + ": " + s.message();
    launch::PlanRestart lineage{parent_id, r.attempt, r.exclude, r.resume_step};
    if (parent.restart) lineage.exclude.insert(lineage.exclude.end(), parent.restart->exclude.begin(), parent.restart->exclude.end());
    launch::UsableExclusions(parent, &lineage.exclude, &outcome->exclusion_note);
    if (base::Status s = launch::BuildRestartPlan(parent, lineage, &plan); !s.ok())
      return "cannot plan the restart of job " + parent_id + ": " + s.message();
    rec.kind = "submit";
    rec.hash = plan.hash;
    rec.plan = plan.ToJson();
    rec.summary = launch::DescribePlan(plan);
    rec.args_digest = base::Sha256Hex(rec.id);
    rec.requester = requester.name;
    rec.requester_role = requester.role;
    // On the record before it exists (a request not on the record is never approved); asking
    // twice audits twice, harmlessly.
    if (base::Status s = AuditEvent(env, "requested", rec.id, requester,
                                    {{"kind", rec.kind}, {"hash", rec.hash}, {"plan", rec.plan}, {"restart_of", parent_id},
                                     {"attempt", r.attempt}, {"reason", r.reason}, {"exclusion_note", outcome->exclusion_note}});
        !s.ok())
      return "audit log unwritable, restart not requested: " + s.message();
    bool created = false;
    if (base::Status s = store.CreateOnce(&rec, approval::UnixNow(), &created); !s.ok()) return s.message();
    *out = rec;
    if (rec.state != "pending") return "";
  }
  launch::Plan plan;
  if (base::Status st = launch::PlanFromJson(out->plan, &plan); !st.ok()) return "the recorded restart plan: " + st.message();
  approval::PolicyDecision d = approval::EvaluatePolicy(env.policy, requester.role, plan);
  // A parent that still runs is cancelled by the restart: the policy must allow that too.
  if (d.allowed && (state == "RUNNING" || state == "PENDING" || state.empty())) {
    const approval::PolicyDecision c = approval::EvaluateCancelPolicy(env.policy, requester.role);
    if (!c.allowed) {
      d.allowed = false;
      d.reasons.push_back("job " + r.parent_job + " still runs and cancelling it is not allowed (" + c.Explain() + ")");
    }
  }
  outcome->policy = d.Explain();
  if (!d.allowed) return "";   // pending: a human decides
  const Actor policy_actor{d.rule.empty() ? "policy" : d.rule, requester.role};
  std::string err = Decide(env, out->id, out->hash, true, policy_actor, "policy", d.Explain(), out);
  // Lost the race to another decider (a second supervisor, a human): their outcome stands.
  if (!err.empty()) (void)store.Get(out->id, approval::UnixNow(), out);
  return out->state == "submitted" ? "" : err;
}

}  // namespace mt::tools
