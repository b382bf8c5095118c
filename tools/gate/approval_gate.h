// The approval gate's product side: what submit_job, cancel_job, `mt approve|deny` and the
// /approvals page share. A plan is recorded pending; a human (terminal, web page, an
// elicitation answered by the client's user) or the CI policy approves exactly that plan
// (its hash); the single winner of the approval executes it. Every step and every refusal
// is written to the audit log first: if the log cannot be written, nothing runs.
#pragma once
#include <optional>
#include <vector>

#include "mcp/typed.h"
#include <chrono>
#include <filesystem>
#include <string>

#include "launcher/approval/audit.h"
#include "launcher/approval/policy.h"
#include "launcher/approval/store.h"
#include "mcp/json.h"

namespace mt::tools {

// How submit_job / cancel_job may reach a human through the agent's own client
// (docs/approvals.md, "Trust model"):
//   url  — URL-mode elicitation: the client opens the /approvals page, where the human logs
//          in with an approver token; nothing the client sends approves anything (default);
//   form — form-mode elicitation / 2026-07-28 inputResponses: the client's answer approves.
//          For a single-user local setup only: a compromised or scripted client (e.g. an
//          auto-answering Elicitation hook) approves its own plans. Trusted config only;
//   off  — pending_approval only: `mt approve ID` or the /approvals page.
enum class InBandApproval { kOff, kUrl, kForm };
const char* InBandName(InBandApproval mode);


struct ApprovalEnv {
  std::filesystem::path workspace;
  std::filesystem::path approvals_dir, audit_log;
  std::chrono::seconds ttl{15 * 60};
  std::size_t max_pending_per_requester = 20;   // 0 = no cap
  launch::approval::Policy policy;
  std::filesystem::path models_dir;   // empty = launch::DefaultModelsDir()

  launch::approval::ApprovalStore Store() const { return launch::approval::ApprovalStore(approvals_dir, ttl); }
  launch::approval::AuditLog Audit() const { return launch::approval::AuditLog(audit_log); }
};

// Who acted, for records and the audit log.
struct Actor {
  std::string name, role;
};

// Writes an audit line {event, plan_id, actor, role, …extra}; the audit log's error if it
// cannot (callers that act on the event fail closed on it).
base::Status AuditEvent(const ApprovalEnv& env, const std::string& event, const std::string& plan_id, const Actor& actor,
                        Json extra = Json::object());

// Audits a refused action ({event: "refused", action, reason}) and returns `reason`
// (with the audit failure appended if the log could not be written).
std::string Refuse(const ApprovalEnv& env, const std::string& action, const std::string& plan_id, const Actor& actor,
                   const std::string& reason);

// Records a new pending plan (audited first; fail closed). Returns "" or the error.
std::string RecordPlan(const ApprovalEnv& env, launch::approval::PlanRecord* rec, const Actor& requester);

// A decision on plan `id` as it was shown (`expected_hash`): pending → approved|denied,
// audited, and an approved plan executed (submit or cancel) by this call alone. A refused
// decision is audited. Returns "" or the error; `out` is the final record when available.
std::string Decide(const ApprovalEnv& env, const std::string& id, const std::string& expected_hash, bool approve,
                   const Actor& approver, const std::string& via, const std::string& reason,
                   launch::approval::PlanRecord* out);

// What the plan will do, as approvers and agents see it: a submit's model, nodes, scheduler
// arguments and exact command, or a cancel's job.
struct PlanSummary {
  std::string kind;
  std::string backend;
  std::optional<std::string> model, job_name, submit_command;    // submit
  std::optional<int64_t> nodes;                                  // submit
  std::optional<std::vector<std::string>> scheduler_args, passthrough;   // submit
  std::optional<std::string> job, job_dir;                       // cancel

  template <class F>
  static void Fields(F& f) {
    f("kind", &PlanSummary::kind, {.one_of = {"submit", "cancel"}});
    f("backend", &PlanSummary::backend);
    f("model", &PlanSummary::model);
    f("nodes", &PlanSummary::nodes);
    f("scheduler_args", &PlanSummary::scheduler_args);
    f("passthrough", &PlanSummary::passthrough);
    f("job_name", &PlanSummary::job_name);
    f("submit_command", &PlanSummary::submit_command);
    f("job", &PlanSummary::job);
    f("job_dir", &PlanSummary::job_dir);
  }
};

// The record as tool / CLI output (structuredContent of submit_job / cancel_job / plan_id
// lookups). `status` = the record's state, or pending_approval while it is pending.
struct PlanView {
  std::string status;
  std::string plan_id, plan_hash;
  PlanSummary plan;
  std::string summary, requester, requester_role;
  mcp::Nullable<std::string> created_at, expires_at, approver, via, decided_at, job_id, result, error, reason;
  mcp::Nullable<std::vector<std::string>> how_to_approve;
  std::string message;

  template <class F>
  static void Fields(F& f) {
    f("status", &PlanView::status,
      {.one_of = {"pending_approval", "approved", "submitted", "denied", "expired", "failed"}});
    f("plan_id", &PlanView::plan_id);
    f("plan_hash", &PlanView::plan_hash);
    f("plan", &PlanView::plan);
    f("summary", &PlanView::summary);
    f("requester", &PlanView::requester);
    f("requester_role", &PlanView::requester_role);
    f("created_at", &PlanView::created_at);
    f("expires_at", &PlanView::expires_at);
    f("approver", &PlanView::approver);
    f("via", &PlanView::via);
    f("decided_at", &PlanView::decided_at);
    f("job_id", &PlanView::job_id);
    f("result", &PlanView::result);
    f("error", &PlanView::error);
    f("reason", &PlanView::reason);
    f("how_to_approve", &PlanView::how_to_approve);
    f("message", &PlanView::message);
  }
};

PlanView RecordView(const launch::approval::PlanRecord& rec, const std::string& message = "");
std::string RecordText(const launch::approval::PlanRecord& rec);

}  // namespace mt::tools
