#include "tools/gate/approval_mcp.h"

#include "mcp/json_rpc.h"
#include "mcp/request_state.h"

#include <thread>

namespace mt::tools {
namespace approval = launch::approval;

namespace {

mcp::ToolResult View(const approval::PlanRecord& rec, const std::string& message = "") {
  PlanView v = RecordView(rec, message);
  std::string text = v.status + ": " + v.message;
  if (v.status == "pending_approval") text += "\n\n" + rec.summary;
  return mcp::ToolResult::Structured(mcp::Encode(v), std::move(text));
}

mcp::ToolResult Refused(const GateOptions& g, const std::string& action, const std::string& id, const Actor& who,
                        const std::string& why) {
  return mcp::ToolResult::Error(Refuse(g.env, action, id, who, why));
}

Json WithoutPlanId(Json args) {
  if (args.is_object()) args.erase("plan_id");
  return args;
}

mcp::ToolResult Lookup(const GateOptions& g, const std::string& kind, const Json& args, const Actor& who) {
  const Json& pid = args["plan_id"];
  const std::string id = pid.is_string() ? pid.get<std::string>() : pid.dump();
  if (!approval::ValidPlanId(id))
    return Refused(g, "lookup", id, who, "plan_id '" + id + "' is not a plan id (32 hex digits from an earlier result)");
  approval::PlanRecord rec;
  if (const base::Status st = g.env.Store().Get(id, approval::UnixNow(), &rec); !st.ok()) return Refused(g, "lookup", id, who, st.message());
  if (rec.kind != kind) return Refused(g, "lookup", id, who, "plan " + id + " is a " + rec.kind + " plan, not a " + kind + " plan");
  const Json rest = WithoutPlanId(args);
  if (!rest.empty() && mcp::RequestStateSealer::Digest(rest) != rec.args_digest)
    return Refused(g, "lookup", id, who,
                   "the arguments given with plan_id differ from the plan's (a changed plan needs a new approval: call "
                   "without plan_id to make a new plan)");
  return View(rec);
}

}  // namespace

Json ApprovalElicitation(const approval::PlanRecord& rec) {
  const std::string what = rec.kind == "submit" ? "submit this job" : "cancel this job";
  return Json{{"message", "mt asks a human to approve plan " + rec.id + ": " + what + "?\n\n" + rec.summary +
                              "\nApprove only if you (a person) have read the plan. Declining leaves it pending for `mt approve " +
                              rec.id + "`."},
              {"requestedSchema",
               {{"type", "object"},
                {"properties",
                 {{"decision", {{"type", "string"}, {"title", "Decision"}, {"enum", {"approve", "deny"}}}},
                  {"plan", {{"type", "string"}, {"title", "Plan id (leave as shown)"}, {"default", rec.id}}}}},
                {"required", {"decision", "plan"}}}}};
}

namespace {

std::string PageLink(const GateOptions& g, const approval::PlanRecord& rec) {
  return g.page_url.empty() ? "" : g.page_url + "?plan=" + rec.id;
}

std::string PendingMessage(const GateOptions& g, const approval::PlanRecord& rec) {
  std::string where = g.page_url.empty() ? "the /approvals page of mt serve --http" : PageLink(g, rec);
  return "Plan " + rec.id + " waits for a human: ask them to run `mt approve " + rec.id + "` on the host or to open " +
         where + " and log in as an approver; call again with plan_id to see its state.";
}

// Form mode: the client's answer is the decision. Trusted single-user setups only.
mcp::ToolResult FormApproval(const GateOptions& g, approval::PlanRecord& rec, const Actor& caller, mcp::CallContext& ctx) {
  if (!ctx.ClientCan("elicitation/create")) return View(rec, PendingMessage(g, rec));
  ctx.set_round_state(Json{{"plan_id", rec.id}, {"hash", rec.hash}});
  Json answer;
  try {
    answer = ctx.AskClient(mcp::InputRequest{"approve_plan", "elicitation/create", ApprovalElicitation(rec)},
                           std::chrono::minutes(5));
  } catch (const mcp::RpcError& e) {
    (void)AuditEvent(g.env, "elicitation_unavailable", rec.id, caller, {{"error", e.what()}});
    return View(rec, PendingMessage(g, rec));
  }
  const std::string action = answer.is_object() ? answer.value("action", "") : "";
  if (action != "accept") {
    // "decline" means declined *or unavailable*: some clients decline everything unasked.
    (void)AuditEvent(g.env, "elicitation_declined", rec.id, caller, {{"action", action}});
    return View(rec, "The client's user did not approve in-band (" + (action.empty() ? "no answer" : action) +
                         "); plan " + rec.id + " waits for `mt approve " + rec.id + "` or the /approvals page.");
  }
  const Json content = answer.value("content", Json::object());
  const std::string answered_plan = content.is_object() ? content.value("plan", "") : "";
  const std::string decision = content.is_object() ? content.value("decision", "") : "";
  if (answered_plan != rec.id)
    return Refused(g, "approve", rec.id, caller,
                   "the elicitation answer names plan '" + answered_plan + "', not " + rec.id + "; plan " + rec.id +
                       " stays pending");
  if (decision != "approve" && decision != "deny")
    return Refused(g, "approve", rec.id, caller, "the elicitation answer has no decision (approve or deny)");
  const std::string via = ctx.era() == mcp::Era::kModern ? "input_required" : "elicitation";
  // Recorded for what it is: whoever controls the client answered, unverified.
  const Actor user{"client of " + caller.name + " (form mode, unverified)", caller.role};
  std::string e = Decide(g.env, rec.id, rec.hash, decision == "approve", user, via, "", &rec);
  if (!e.empty() && rec.state != "failed") return mcp::ToolResult::Error(e);
  return View(rec);
}

// URL mode: the client only opens the page; the decision is made there by an authenticated
// approver and read back from the store.
mcp::ToolResult UrlApproval(const GateOptions& g, approval::PlanRecord& rec, const Actor& caller, mcp::CallContext& ctx) {
  if (g.page_url.empty() || !ClientSupportsUrlElicitation(ctx)) return View(rec, PendingMessage(g, rec));
  ctx.set_round_state(Json{{"plan_id", rec.id}, {"hash", rec.hash}});
  Json answer;
  try {
    answer = ctx.AskClient(mcp::InputRequest{"approve_plan_url", "elicitation/create",
                                             ApprovalUrlElicitation(rec, g.page_url, ctx.era() != mcp::Era::kModern)},
                           std::chrono::minutes(5));
  } catch (const mcp::RpcError& e) {
    (void)AuditEvent(g.env, "elicitation_unavailable", rec.id, caller, {{"error", e.what()}, {"mode", "url"}});
    return View(rec, PendingMessage(g, rec));
  }
  const std::string action = answer.is_object() ? answer.value("action", "") : "";
  (void)AuditEvent(g.env, "url_elicitation_" + (action.empty() ? std::string("unanswered") : action), rec.id, caller,
             {{"url", PageLink(g, rec)}});
  if (action != "accept") return View(rec, PendingMessage(g, rec));
  // The user agreed to open the page. Wait for the human's decision there (bounded, and
  // shorter than common client request timeouts, 60 s in the TypeScript SDK; a client that
  // cancels ends the wait), then answer with the plan's state, whatever it is. A plan
  // approved on the page is executed by the page's own request: allow it 10 s more to record
  // the job so that this answer can name it.
  using Clock = std::chrono::steady_clock;
  const auto decide_by = Clock::now() + g.url_wait, run_by = decide_by + std::chrono::seconds(10);
  approval::PlanRecord now = rec;
  auto waiting = [&] {
    const auto t = Clock::now();
    return !ctx.cancelled() && ((now.state == "pending" && t < decide_by) || (now.state == "approved" && t < run_by));
  };
  while (waiting()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    if (!g.env.Store().Get(rec.id, approval::UnixNow(), &now).ok()) break;
  }
  rec = now;
  return rec.state == "pending" ? View(rec, PendingMessage(g, rec)) : View(rec);
}

}  // namespace

Json ApprovalUrlElicitation(const approval::PlanRecord& rec, const std::string& page_url, bool legacy) {
  const std::string what = rec.kind == "submit" ? "submit a job" : "cancel a job";
  Json p = {{"mode", "url"},
            {"message", "mt asks a human approver to review plan " + rec.id + " (" + what +
                            ") on its approval page. Log in there with your approver token; nothing answered here approves it."},
            {"url", page_url + "?plan=" + rec.id}};
  if (legacy) p["elicitationId"] = rec.id;
  return p;
}

bool ClientSupportsUrlElicitation(const mcp::CallContext& ctx) {
  const Json& caps = ctx.client_capabilities();
  if (!caps.is_object()) return false;
  auto e = caps.find("elicitation");
  return e != caps.end() && e->is_object() && e->contains("url") && (*e)["url"].is_object();
}

mcp::ToolResult GatedCall(const GateOptions& g, const std::string& kind, const Json& args, mcp::CallContext& ctx,
                          const PlanBuilder& build) {
  const Actor caller{ctx.caller().name, ctx.caller().role};
  if (args.contains("plan_id")) return Lookup(g, kind, args, caller);
  const std::string digest = mcp::RequestStateSealer::Digest(args);
  approval::PlanRecord rec;

  const Json& round = ctx.round_state();
  if (round.is_object() && round.contains("plan_id")) {
    // A later 2026-07-28 round: the plan was made in the first one. The sealed state is
    // bound to these arguments and this caller already; check against the store too.
    const std::string id = round.value("plan_id", "");
    if (const base::Status st = g.env.Store().Get(id, approval::UnixNow(), &rec); !st.ok()) return Refused(g, kind, id, caller, st.message());
    if (rec.args_digest != digest || rec.requester != caller.name || rec.hash != round.value("hash", ""))
      return Refused(g, kind, id, caller, "the request changed since plan " + id + " was made; submit again for a new plan");
    if (rec.state != "pending") return Refused(g, kind, id, caller, "plan " + id + " is " + rec.state + ", not pending");
  } else {
    approval::PolicyDecision policy;
    if (auto e = build(args, &rec, &policy); !e.empty()) return Refused(g, kind, "", caller, e);
    rec.kind = kind;
    rec.args_digest = digest;
    if (auto e = RecordPlan(g.env, &rec, caller); !e.empty()) return Refused(g, kind, "", caller, e);
    if (caller.role == "ci") {
      // Non-interactive: the policy approves or refuses, and is recorded as the approver.
      const Actor policy_actor{policy.rule.empty() ? "policy" : policy.rule, caller.role};
      std::string e = Decide(g.env, rec.id, rec.hash, policy.allowed, policy_actor, "policy", policy.Explain(), &rec);
      if (!e.empty() && !policy.allowed) return mcp::ToolResult::Error(e);
      return View(rec, policy.allowed ? (e.empty() ? "" : "approved by policy but failed: " + e)
                                      : "Refused: " + policy.Explain());
    }
  }

  switch (g.in_band) {
    case InBandApproval::kOff: return View(rec, PendingMessage(g, rec));
    case InBandApproval::kUrl: return UrlApproval(g, rec, caller, ctx);
    case InBandApproval::kForm: return FormApproval(g, rec, caller, ctx);
  }
  return View(rec, PendingMessage(g, rec));
}

}  // namespace mt::tools
