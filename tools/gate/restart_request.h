// A supervisor's restart decision, through the approval gate and not around it: the restart
// is a plan (launch/restart_plan.h) recorded like any submit, approved by the policy rule of
// the supervisor's role (mt.yaml `policy.<role>`, e.g. `policy.supervisor`) or else left
// pending for a human (`mt approve`, the /approvals page). Approving it cancels the parent
// if it still runs and submits the restart (approval_gate.cpp, Execute).
//
// Idempotent: a job is restarted at most once, and the plan id is derived from the workspace
// and the parent's canonical job id (RestartPlanId), so a supervisor killed anywhere and
// started again — or a second supervisor that began at another attempt of the chain — finds
// the same plan and never submits twice. A restart a human denied, or that expired or failed,
// is not asked for again for that job.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/gate/approval_gate.h"

namespace mt::tools {

struct RestartRequest {
  std::string parent_job;
  int attempt = 1;                          // 1 = the chain's first restart
  std::vector<std::string> exclude;         // hosts to keep the restart off
  std::optional<int64_t> resume_step;       // the checkpoint it resumes from
  std::string reason;                       // the decision's reason, audited with the request
};

// 32 hex digits: the same for the same workspace and parent job, however either is spelled
// (job id or job dir name; a path through a symlink). "" for a job mt did not submit here.
std::string RestartPlanId(const std::filesystem::path& workspace, const std::string& parent_job);

struct RestartOutcome {
  std::string policy;           // what the policy said ("" when the plan was decided before)
  std::string exclusion_note;   // exclusions dropped and why (launch::UsableExclusions)
};

// Records restart `r` (once per parent job) and, when the policy allows the requester's role
// to run it, approves and runs it. Returns "" or the error; `*out` is the record as it stands
// (pending: a human decides; denied / expired / failed: decided before, not asked again).
std::string RequestRestart(const ApprovalEnv& env, const RestartRequest& r, const Actor& requester,
                           launch::approval::PlanRecord* out, RestartOutcome* outcome);

}  // namespace mt::tools
