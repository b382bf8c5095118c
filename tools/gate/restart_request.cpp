#include "tools/gate/restart_request.h"

#include "base/sha256.h"
#include "launcher/launch/restart_plan.h"

namespace mt::tools {
namespace approval = launch::approval;

std::string RestartPlanId(const std::filesystem::path& workspace, const std::string& parent_job, int attempt) {
  const std::string key = "mt restart\n" + std::filesystem::absolute(workspace).lexically_normal().string() + "\n" + parent_job +
                          "\n" + std::to_string(attempt);
  return base::Sha256Hex(key).substr(0, 32);
}

std::string RequestRestart(const ApprovalEnv& env, const RestartRequest& r, const Actor& requester, approval::PlanRecord* out,
                           RestartOutcome* outcome) {
  *outcome = RestartOutcome{};
  approval::PlanRecord rec;
  rec.id = RestartPlanId(env.workspace, r.parent_job, r.attempt);
  auto store = env.Store();
  // Asked before: the plan recorded then is the one that counts, whatever its state.
  if (store.Get(rec.id, approval::UnixNow(), &rec).ok()) {
    *out = rec;
    if (rec.state != "pending") return "";
  } else {
    launch::Plan parent, plan;
    if (base::Status st = launch::LoadJobPlan(env.workspace, r.parent_job, &parent); !st.ok())
      return "cannot restart job " + r.parent_job + ": " + st.message();
    launch::PlanRestart lineage{r.parent_job, r.attempt, r.exclude, r.resume_step};
    launch::UsableExclusions(parent, &lineage.exclude, &outcome->exclusion_note);
    if (base::Status st = launch::BuildRestartPlan(parent, lineage, &plan); !st.ok())
      return "cannot plan the restart of job " + r.parent_job + ": " + st.message();
    rec.kind = "submit";
    rec.hash = plan.hash;
    rec.plan = plan.ToJson();
    rec.summary = launch::DescribePlan(plan);
    rec.args_digest = base::Sha256Hex(rec.id);
    rec.requester = requester.name;
    rec.requester_role = requester.role;
    bool created = false;
    if (base::Status st = store.CreateOnce(&rec, approval::UnixNow(), &created); !st.ok()) return st.message();
    if (created) {
      if (base::Status st = AuditEvent(env, "requested", rec.id, requester,
                                       {{"kind", rec.kind}, {"hash", rec.hash}, {"plan", rec.plan},
                                        {"restart_of", r.parent_job}, {"attempt", r.attempt}, {"reason", r.reason},
                                        {"exclusion_note", outcome->exclusion_note},
                                        {"expires", approval::IsoUtc(rec.expires)}});
          !st.ok()) {
        // Fail closed, as RecordPlan does: a request not on the record is never approved.
        approval::PlanRecord ignored;
        (void)store.Decide(rec.id, rec.hash, false, "mt", "audit", "audit log unwritable: " + st.message(), approval::UnixNow(),
                           &ignored);
        return "audit log unwritable, restart not requested: " + st.message();
      }
    }
    *out = rec;
    if (rec.state != "pending") return "";
  }
  launch::Plan plan;
  if (base::Status st = launch::PlanFromJson(out->plan, &plan); !st.ok()) return "the recorded restart plan: " + st.message();
  const approval::PolicyDecision d = approval::EvaluatePolicy(env.policy, requester.role, plan);
  outcome->policy = d.Explain();
  if (!d.allowed) return "";   // pending: a human decides
  const Actor policy_actor{d.rule.empty() ? "policy" : d.rule, requester.role};
  std::string err = Decide(env, out->id, out->hash, true, policy_actor, "policy", d.Explain(), out);
  // Lost the race to another decider (a second supervisor, a human): their outcome stands.
  if (!err.empty()) (void)store.Get(out->id, approval::UnixNow(), out);
  return out->state == "submitted" ? "" : err;
}

}  // namespace mt::tools
