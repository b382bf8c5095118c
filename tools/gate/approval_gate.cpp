#include "tools/gate/approval_gate.h"

#include <sys/wait.h>

#include <fstream>
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

std::string AuditEvent(const ApprovalEnv& env, const std::string& event, const std::string& plan_id, const Actor& actor,
                       Json extra) {
  Json line = {{"event", event}, {"plan_id", plan_id}, {"actor", actor.name}, {"role", actor.role}};
  for (auto it = extra.begin(); it != extra.end(); ++it) line[it.key()] = it.value();
  return env.Audit().Append(std::move(line));
}

std::string Refuse(const ApprovalEnv& env, const std::string& action, const std::string& plan_id, const Actor& actor,
                   const std::string& reason) {
  // A forged id is recorded as text, never used as a path.
  std::string err = AuditEvent(env, "refused", plan_id, actor, {{"action", action}, {"reason", reason}});
  return err.empty() ? reason : reason + " (and the audit log could not be written: " + err + ")";
}

std::string RecordPlan(const ApprovalEnv& env, approval::PlanRecord* rec, const Actor& requester) {
  rec->requester = requester.name;
  rec->requester_role = requester.role;
  auto store = env.Store();
  if (auto e = store.Create(rec, approval::UnixNow(), env.max_pending_per_requester); !e.empty()) return e;
  if (auto e = AuditEvent(env, "requested", rec->id, requester,
                          {{"kind", rec->kind}, {"hash", rec->hash}, {"plan", rec->plan}, {"expires", approval::IsoUtc(rec->expires)}});
      !e.empty()) {
    // Fail closed: a plan whose request is not on the record can never be approved.
    approval::PlanRecord ignored;
    store.Decide(rec->id, rec->hash, false, "mt", "audit", "audit log unwritable: " + e, approval::UnixNow(), &ignored);
    return "audit log unwritable, nothing recorded: " + e;
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

// Runs an approved plan. Returns the backend's job id / message, or an error.
std::string Execute(const ApprovalEnv& env, const approval::PlanRecord& rec, std::string* job_id, std::string* result) {
  if (rec.kind == "submit") {
    launch::Plan plan;
    if (auto e = launch::PlanFromJson(rec.plan, &plan); !e.empty()) return "refusing to submit: " + e;
    if (plan.hash != rec.hash) return "refusing to submit: the stored plan's hash is not the approved hash";
    launch::SubmitResult r;
    if (auto e = launch::Submit(plan, {"mt", "approve", rec.id}, &r); !e.empty()) return e;
    if (plan.backend == "local") ReapWhenDone(r.job_dir);
    *job_id = r.job_id;
    *result = "submitted job " + r.job_id + " (" + plan.backend + "); log " + r.log.string();
    return "";
  }
  if (rec.kind == "cancel") {
    const std::string job = rec.plan.value("job", "");
    if (rec.plan.value("workspace", "") != env.workspace.string())
      return "refusing to cancel: the plan names another workspace";
    std::string msg;
    if (auto e = launch::CancelJob(env.workspace, job, &msg); !e.empty()) return e;
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
  if (auto e = store.Decide(id, expected_hash, approve, approver.name, via, reason, now, out); !e.empty())
    return Refuse(env, action, id, approver, e);
  // The decision is recorded before anything runs; without the audit line nothing runs.
  if (auto e = AuditEvent(env, approve ? "approved" : "denied", id, approver,
                          {{"via", via}, {"hash", out->hash}, {"kind", out->kind}, {"requester", out->requester},
                           {"reason", reason}});
      !e.empty()) {
    if (approve) store.Finish(id, "", "", "not executed: audit log unwritable: " + e, approval::UnixNow(), out);
    return "audit log unwritable; nothing was " + std::string(approve ? "submitted" : "recorded") + ": " + e;
  }
  if (!approve) return "";
  std::string job_id, result;
  std::string err = Execute(env, *out, &job_id, &result);
  store.Finish(id, job_id, result, err, approval::UnixNow(), out);
  AuditEvent(env, err.empty() ? (out->kind == "submit" ? "submitted" : "cancelled") : "failed", id, approver,
             {{"job_id", job_id}, {"result", result}, {"error", err}, {"hash", out->hash}});
  return err;
}

Json RecordView(const approval::PlanRecord& rec, const std::string& message) {
  auto opt = [](const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); };
  auto at = [](int64_t t) { return t ? Json(approval::IsoUtc(t)) : Json(nullptr); };
  Json plan = {{"kind", rec.kind}};
  if (rec.kind == "submit") {
    const Json& p = rec.plan;
    plan["backend"] = p.value("backend", "");
    plan["model"] = p.contains("model") ? p["model"].value("name", "") : "";
    plan["nodes"] = p.value("nodes", 0);
    plan["scheduler_args"] = p.value("scheduler_args", Json::array());
    plan["passthrough"] = p.value("passthrough", Json::array());
    plan["job_name"] = p.value("job_name", "");
    plan["submit_command"] = p.contains("submit_argv") ? launch::ShellJoin(p["submit_argv"].get<std::vector<std::string>>()) : "";
  } else {
    plan["job"] = rec.plan.value("job", "");
    plan["backend"] = rec.plan.value("backend", "");
    plan["job_dir"] = rec.plan.value("job_dir", "");
  }
  const std::string status = rec.state == "pending" ? "pending_approval" : rec.state;
  Json how = nullptr;
  if (rec.state == "pending")
    how = Json::array({"mt approve " + rec.id, "mt deny " + rec.id, "the /approvals page of mt serve --http"});
  std::string msg = message;
  if (msg.empty()) {
    if (status == "pending_approval")
      msg = "Plan " + rec.id + " waits for a human: ask them to run `mt approve " + rec.id +
            "` on the host (or use the /approvals page); call again with plan_id to see its state.";
    else if (status == "submitted")
      msg = rec.kind == "submit" ? "Submitted as job " + rec.job_id + "." : "Cancelled job " + rec.job_id + ".";
    else if (status == "denied")
      msg = "Denied by " + rec.approver + (rec.reason.empty() ? "." : ": " + rec.reason);
    else if (status == "expired")
      msg = "The plan expired before anyone approved it; submit again for a new plan.";
    else if (status == "failed")
      msg = "Approved but failed: " + rec.error;
    else
      msg = "Approved; running.";
  }
  return Json{{"status", status},
              {"plan_id", rec.id},
              {"plan_hash", rec.hash},
              {"plan", plan},
              {"summary", rec.summary},
              {"requester", rec.requester},
              {"requester_role", rec.requester_role},
              {"created_at", at(rec.created)},
              {"expires_at", at(rec.expires)},
              {"approver", opt(rec.approver)},
              {"via", opt(rec.via)},
              {"decided_at", at(rec.decided)},
              {"job_id", opt(rec.job_id)},
              {"result", opt(rec.result)},
              {"error", opt(rec.error)},
              {"reason", opt(rec.reason)},
              {"how_to_approve", how},
              {"message", msg}};
}

std::string RecordText(const approval::PlanRecord& rec) {
  Json v = RecordView(rec);
  return v["status"].get<std::string>() + ": " + v["message"].get<std::string>();
}

Json RecordViewSchema() {
  Json str = {{"type", "string"}}, ostr = {{"type", {"string", "null"}}};
  return Json{{"type", "object"},
              {"required", {"status", "plan_id", "plan_hash", "plan", "summary", "message"}},
              {"properties",
               {{"status", {{"enum", {"pending_approval", "approved", "submitted", "denied", "expired", "failed"}}}},
                {"plan_id", str},
                {"plan_hash", str},
                {"plan", {{"type", "object"}}},
                {"summary", str},
                {"requester", str},
                {"requester_role", str},
                {"created_at", ostr},
                {"expires_at", ostr},
                {"approver", ostr},
                {"via", ostr},
                {"decided_at", ostr},
                {"job_id", ostr},
                {"result", ostr},
                {"error", ostr},
                {"reason", ostr},
                {"how_to_approve", {{"type", {"array", "null"}}, {"items", str}}},
                {"message", str}}}};
}

}  // namespace mt::tools
