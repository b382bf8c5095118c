// The gate as MCP tools see it: one call flow shared by submit_job and cancel_job.
//
//   plan_id given         → the plan's state (never a decision; arguments beside plan_id
//                            must be the ones that made the plan, else refused)
//   role ci               → the configured policy decides, server-side, on the built plan
//   in_band url (default) → if the client declared URL-mode elicitation and the /approvals
//                            page is known: the client is asked to open the page for this
//                            plan, where a human logs in as an approver and decides; the call
//                            then waits (bounded) for that decision. The client's answer
//                            itself decides nothing, so an agent cannot approve its own plan.
//   in_band form          → the plan is shown to the client's user as a form (legacy
//                            elicitation/create; 2026-07-28 input_required with a signed
//                            requestState); the answer decides. Trusted local setups only.
//   otherwise, or decline → pending_approval: a human runs `mt approve ID` or uses /approvals
#pragma once
#include <chrono>
#include <functional>
#include <string>

#include "mcp/call_context.h"
#include "mcp/tool.h"
#include "tools/gate/approval_gate.h"

namespace mt::tools {

struct GateOptions {
  ApprovalEnv env;
  InBandApproval in_band = InBandApproval::kUrl;   // tools/catalog/config.h
  std::string page_url;                            // the /approvals page (URL mode); empty: none known
  std::chrono::milliseconds url_wait{std::chrono::seconds(45)};   // how long a URL-mode call waits for the human
};

// Builds the plan of a fresh request into `rec` (kind, plan, hash, summary) and, for role
// `ci`, the policy decision. Returns "" or the reason the request is refused.
using PlanBuilder = std::function<std::string(const Json& args, launch::approval::PlanRecord* rec,
                                              launch::approval::PolicyDecision* ci_decision)>;

mcp::ToolResult GatedCall(const GateOptions& gate, const std::string& kind, const Json& args, mcp::CallContext& ctx,
                          const PlanBuilder& build);

// The form shown to the client's user for plan `rec` (form mode).
Json ApprovalElicitation(const launch::approval::PlanRecord& rec);
// The URL-mode elicitation for plan `rec`: opens `page_url` for it (legacy adds elicitationId).
Json ApprovalUrlElicitation(const launch::approval::PlanRecord& rec, const std::string& page_url, bool legacy);
// Whether the client declared URL-mode elicitation (capabilities.elicitation.url).
bool ClientSupportsUrlElicitation(const mcp::CallContext& ctx);

}  // namespace mt::tools
