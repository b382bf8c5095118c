// A supervisor's restart decision, through the approval gate and not around it: the restart
// is a plan (launch/restart_plan.h) recorded like any submit, approved by the policy rule of
// the supervisor's role (mt.yaml `policy.<role>`, e.g. `policy.supervisor`) or else left
// pending for a human (`mt approve`, the /approvals page). Approving it cancels the parent
// if it still runs and submits the restart (approval_gate.cpp, Execute).
//
// Idempotent: the plan id is derived from the workspace, the parent job and the attempt, so
// a supervisor killed between recording the plan and running it, then started again, finds
// the same plan and never submits twice.
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

// 32 hex digits: the same for the same workspace, parent job and attempt.
std::string RestartPlanId(const std::filesystem::path& workspace, const std::string& parent_job, int attempt);

struct RestartOutcome {
  std::string policy;           // what the policy said ("" when the plan was decided before)
  std::string exclusion_note;   // exclusions dropped and why (launch::UsableExclusions)
};

// Records restart `r` (once) and, when the policy allows the requester's role to run it,
// approves and runs it. Returns "" or the error; `*out` is the record as it stands (pending:
// a human decides).
std::string RequestRestart(const ApprovalEnv& env, const RestartRequest& r, const Actor& requester,
                           launch::approval::PlanRecord* out, RestartOutcome* outcome);

}  // namespace mt::tools
