// The /approvals web page of `mt serve --http`: a human logs in with an approver token
// (exchanged for an HttpOnly, SameSite=Strict session cookie), sees every pending plan in
// full and approves or denies it. Each form carries the session's CSRF token and the plan
// hash that was displayed; the decision binds to that hash. Agent and CI tokens, missing
// or stale sessions and bad CSRF tokens are refused and audited.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mcp/http_transport.h"
#include "mcp/principal.h"
#include "tools/gate/approval_gate.h"

namespace mt::tools {

using TokenCheck = std::function<std::optional<mcp::Principal>(const std::string& secret)>;

// Routes for HttpOptions::pages: GET /approvals, POST /approvals/login,
// POST /approvals/decide, POST /approvals/logout.
std::vector<mcp::PageRoute> ApprovalPages(const ApprovalEnv& env, TokenCheck check_token);

}  // namespace mt::tools
