// The gate as MCP tools see it: one call flow shared by submit_job and cancel_job.
//
//   plan_id given         → the plan's state (never a decision; arguments beside plan_id
//                            must be the ones that made the plan, else refused)
//   role ci               → the configured policy decides, server-side, on the built plan
//   client can elicit     → the plan is shown to the client's user: legacy era, a real
//                            elicitation/create request; 2026-07-28, an input_required result
//                            whose signed requestState carries the plan id and hash
//   otherwise, or decline → pending_approval: a human runs `mt approve ID` or uses /approvals
#pragma once
#include <functional>
#include <string>

#include "mcp/call_context.h"
#include "mcp/tool.h"
#include "tools/approval_gate.h"

namespace mt::tools {

struct GateOptions {
  ApprovalEnv env;
  bool in_band = true;   // ask the client's user (elicitation); false: humans approve out of band only
};

// Builds the plan of a fresh request into `rec` (kind, plan, hash, summary) and, for role
// `ci`, the policy decision. Returns "" or the reason the request is refused.
using PlanBuilder = std::function<std::string(const Json& args, launch::approval::PlanRecord* rec,
                                              launch::approval::PolicyDecision* ci_decision)>;

mcp::ToolResult GatedCall(const GateOptions& gate, const std::string& kind, const Json& args, mcp::CallContext& ctx,
                          const PlanBuilder& build);

// The form shown to the client's user for plan `rec`.
Json ApprovalElicitation(const launch::approval::PlanRecord& rec);

}  // namespace mt::tools
