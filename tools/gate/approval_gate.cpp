#include "tools/gate/approval_gate.h"

#include <sys/wait.h>

#include <fstream>
#include <set>
#include <thread>

#include "launcher/launch/model_config.h"
#include "launcher/launch/plan.h"
#include "launcher/launch/submit.h"

namespace mt::tools {
namespace approval = launch::approval;

const char* InBandName(InBandApproval mode) {
  switch (mode) {
    case InBandApproval::kOff: return "off";
    case InBandApproval::kUrl: return "url";
    case InBandApproval::kForm: return "form";
  }
  return "off";
}

base::Status AuditEvent(const ApprovalEnv& env, const std::string& event, const std::string& plan_id, const Actor& actor,
                        Json extra) {
  Json line = {{"event", event}, {"plan_id", plan_id}, {"actor", actor.name}, {"role", actor.role}};
  for (auto it = extra.begin(); it != extra.end(); ++it) line[it.key()] = it.value();
  return env.Audit().Append(std::move(line));
}

std::string Refuse(const ApprovalEnv& env, const std::string& action, const std::string& plan_id, const Actor& actor,
                   const std::string& reason) {
  // A forged id is recorded as text, never used as a path.
  const base::Status st = AuditEvent(env, "refused", plan_id, actor, {{"action", action}, {"reason", reason}});
  return st.ok() ? reason : reason + " (and the audit log could not be written: " + st.message() + ")";
}

std::string RecordPlan(const ApprovalEnv& env, approval::PlanRecord* rec, const Actor& requester) {
  rec->requester = requester.name;
  rec->requester_role = requester.role;
  auto store = env.Store();
  if (const base::Status st = store.Create(rec, approval::UnixNow(), env.max_pending_per_requester); !st.ok()) return st.message();
  if (const base::Status st = AuditEvent(env, "requested", rec->id, requester,
                                         {{"kind", rec->kind}, {"hash", rec->hash}, {"plan", rec->plan},
                                          {"expires", approval::IsoUtc(rec->expires)}});
      !st.ok()) {
    // Fail closed: a plan whose request is not on the record can never be approved.
    approval::PlanRecord ignored;
    (void)store.Decide(rec->id, rec->hash, false, "mt", "audit", "audit log unwritable: " + st.message(),
                       approval::UnixNow(), &ignored);
    return "audit log unwritable, nothing recorded: " + st.message();
  }
  return "";
}

namespace {

// A local job that is a direct child of the process that submitted it would, in a long-lived
// server, stay a zombie after it ends (and still look RUNNING to JobStatus). Reap it.
void ReapWhenDone(const std::filesystem::path& job_dir) {
  std::ifstream in(job_dir / ".mt-launch.json");
  const Json rec = Json::parse(in, nullptr, false);
  const int pid = rec.is_object() ? rec.value("pgid", 0) : 0;
  // Only while it is still our child (a launcher that double-forks leaves none to reap).
  if (pid > 0 && waitpid(pid, nullptr, WNOHANG) == 0) std::thread([pid] { waitpid(pid, nullptr, 0); }).detach();
}

// A restart replaces its parent: a parent still holding its nodes (a hang) is cancelled first;
// one that completed needs no restart; one whose state cannot be read is not guessed at. When
// the policy (not a human) approved the restart, the cancel must be one the policy allows too.
std::string ReplaceParent(const ApprovalEnv& env, const approval::PlanRecord& rec, const launch::PlanRestart& restart,
                          const std::filesystem::path& plan_workspace, std::string* cancelled) {
  std::error_code ec;
  if (!std::filesystem::equivalent(plan_workspace, env.workspace, ec)) return "the plan names another workspace";
  Json st;
  if (const base::Status s = launch::JobStatus(env.workspace, restart.parent_job, &st); !s.ok())
    return "cannot read the state of job " + restart.parent_job + ": " + s.message();
  const std::string state = st.value("state", "");
  static const std::set<std::string> kEnded = {"FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
                                               "PREEMPTED", "BOOT_FAIL", "DEADLINE"};
  if (state == "COMPLETED") return "job " + restart.parent_job + " completed: there is nothing to restart";
  if (kEnded.count(state)) return "";
  if (rec.via == "policy") {
    const approval::PolicyDecision d = approval::EvaluateCancelPolicy(env.policy, rec.requester_role);
    if (!d.allowed)
      return "job " + restart.parent_job + " is " + (state.empty() ? "in an unknown state" : state) +
             " and cancelling it needs a human (" + d.Explain() + ")";
  }
  std::string msg;
  if (const base::Status c = launch::CancelJob(env.workspace, restart.parent_job, &msg); !c.ok())
    return "job " + restart.parent_job + " is " + (state.empty() ? "in an unknown state" : state) + " and could not be cancelled: " + c.message();
  *cancelled = "cancelled job " + restart.parent_job + "; ";
  return "";
}

// Runs an approved plan. Returns the backend's job id / message, or an error.
std::string Execute(const ApprovalEnv& env, const approval::PlanRecord& rec, std::string* job_id, std::string* result) {
  if (rec.kind == "submit") {
    launch::Plan plan;
    if (const base::Status st = launch::PlanFromJson(rec.plan, &plan); !st.ok()) return "refusing to submit: " + st.message();
    if (plan.hash != rec.hash) return "refusing to submit: the stored plan's hash is not the approved hash";
    std::string cancelled;
    if (plan.restart) {
      if (std::string e = ReplaceParent(env, rec, *plan.restart, plan.workspace, &cancelled); !e.empty()) return "refusing to restart: " + e;
    }
    launch::SubmitResult r;
    if (const base::Status st = launch::Submit(plan, {"mt", "approve", rec.id}, &r); !st.ok()) return st.message();
    if (plan.backend == "local") ReapWhenDone(r.job_dir);
    *job_id = r.job_id;
    *result = cancelled + "submitted job " + r.job_id + " (" + plan.backend + "); log " + r.log.string();
    return "";
  }
  if (rec.kind == "cancel") {
    const std::string job = rec.plan.value("job", "");
    if (rec.plan.value("workspace", "") != env.workspace.string())
      return "refusing to cancel: the plan names another workspace";
    std::string msg;
    if (const base::Status st = launch::CancelJob(env.workspace, job, &msg); !st.ok()) return st.message();
    *job_id = job;
    *result = msg.empty() ? "cancelled " + job : msg;
    return "";
  }
  return "unknown plan kind '" + rec.kind + "'";
}

}  // namespace

std::string Decide(const ApprovalEnv& env, const std::string& id, const std::string& expected_hash, bool approve,
                   const Actor& approver, const std::string& via, const std::string& reason, approval::PlanRecord* out) {
  const std::string action = approve ? "approve" : "deny";
  if (!approval::ValidPlanId(id)) return Refuse(env, action, id, approver, "no such plan '" + id + "' (not a plan id)");
  if (approver.role != "approver" && via != "policy" && via != "elicitation" && via != "input_required")
    return Refuse(env, action, id, approver, "role '" + approver.role + "' may not " + action + " plans (approver role needed)");
  auto store = env.Store();
  const int64_t now = approval::UnixNow();
  if (const base::Status st = store.Decide(id, expected_hash, approve, approver.name, via, reason, now, out); !st.ok())
    return Refuse(env, action, id, approver, st.message());
  // The decision is recorded before anything runs; without the audit line nothing runs.
  if (const base::Status st = AuditEvent(env, approve ? "approved" : "denied", id, approver,
                                         {{"via", via}, {"hash", out->hash}, {"kind", out->kind},
                                          {"requester", out->requester}, {"reason", reason}});
      !st.ok()) {
    if (approve)
      (void)store.Finish(id, "", "", "not executed: audit log unwritable: " + st.message(), approval::UnixNow(), out);
    return "audit log unwritable; nothing was " + std::string(approve ? "submitted" : "recorded") + ": " + st.message();
  }
  if (!approve) return "";
  std::string job_id, result;
  std::string err = Execute(env, *out, &job_id, &result);
  // Both best effort: the job runs (or failed) whatever they return, and err says which.
  (void)store.Finish(id, job_id, result, err, approval::UnixNow(), out);
  (void)AuditEvent(env, err.empty() ? (out->kind == "submit" ? "submitted" : "cancelled") : "failed", id, approver,
             {{"job_id", job_id}, {"result", result}, {"error", err}, {"hash", out->hash}});
  return err;
}

namespace {

PlanSummary SummaryOf(const approval::PlanRecord& rec) {
  PlanSummary plan;
  plan.kind = rec.kind;
  const Json& p = rec.plan;
  plan.backend = p.value("backend", "");
  if (rec.kind == "submit") {
    plan.model = p.contains("model") ? p["model"].value("name", "") : "";
    plan.nodes = p.value("nodes", int64_t{0});
    plan.scheduler_args = p.value("scheduler_args", std::vector<std::string>{});
    plan.passthrough = p.value("passthrough", std::vector<std::string>{});
    plan.job_name = p.value("job_name", "");
    plan.submit_command = p.contains("submit_argv") ? launch::ShellJoin(p["submit_argv"].get<std::vector<std::string>>()) : "";
  } else {
    plan.job = p.value("job", "");
    plan.job_dir = p.value("job_dir", "");
  }
  return plan;
}

std::string DefaultMessage(const approval::PlanRecord& rec, const std::string& status) {
  if (status == "pending_approval")
    return "Plan " + rec.id + " waits for a human: ask them to run `mt approve " + rec.id +
           "` on the host (or use the /approvals page); call again with plan_id to see its state.";
  if (status == "submitted" && rec.kind == "submit" && rec.plan.contains("restart")) {
    const std::string parent = rec.plan["restart"].value("parent_job", "");
    return "Restart of job " + parent + ": " + (rec.result.rfind("cancelled job ", 0) == 0 ? "cancelled job " + parent + ", then " : "") +
           "submitted job " + rec.job_id + ".";
  }
  if (status == "submitted") return rec.kind == "submit" ? "Submitted as job " + rec.job_id + "." : "Cancelled job " + rec.job_id + ".";
  if (status == "denied") return "Denied by " + rec.approver + (rec.reason.empty() ? "." : ": " + rec.reason);
  if (status == "expired") return "The plan expired before anyone approved it; submit again for a new plan.";
  if (status == "failed") return "Approved but failed: " + rec.error;
  return "Approved; running.";
}

}  // namespace

PlanView RecordView(const approval::PlanRecord& rec, const std::string& message) {
  auto opt = [](const std::string& s) { return s.empty() ? mcp::Nullable<std::string>() : mcp::Nullable<std::string>(s); };
  auto at = [](int64_t t) { return t ? mcp::Nullable<std::string>(approval::IsoUtc(t)) : mcp::Nullable<std::string>(); };
  PlanView v;
  v.status = rec.state == "pending" ? "pending_approval" : rec.state;
  v.plan_id = rec.id;
  v.plan_hash = rec.hash;
  v.plan = SummaryOf(rec);
  v.summary = rec.summary;
  v.requester = rec.requester;
  v.requester_role = rec.requester_role;
  v.created_at = at(rec.created);
  v.expires_at = at(rec.expires);
  v.approver = opt(rec.approver);
  v.via = opt(rec.via);
  v.decided_at = at(rec.decided);
  v.job_id = opt(rec.job_id);
  v.result = opt(rec.result);
  v.error = opt(rec.error);
  v.reason = opt(rec.reason);
  if (rec.state == "pending")
    v.how_to_approve = std::vector<std::string>{"mt approve " + rec.id, "mt deny " + rec.id, "the /approvals page of mt serve --http"};
  v.message = message.empty() ? DefaultMessage(rec, v.status) : message;
  return v;
}

std::string RecordText(const approval::PlanRecord& rec) {
  PlanView v = RecordView(rec);
  return v.status + ": " + v.message;
}

}  // namespace mt::tools
