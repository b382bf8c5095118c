#include "tools/approval_mcp.h"

#include "mcp/json_rpc.h"
#include "mcp/request_state.h"

namespace mt::tools {
namespace approval = launch::approval;

namespace {

mcp::ToolResult View(const approval::PlanRecord& rec, const std::string& message = "") {
  Json v = RecordView(rec, message);
  std::string text = v["status"].get<std::string>() + ": " + v["message"].get<std::string>();
  if (v["status"] == "pending_approval") text += "\n\n" + rec.summary;
  return mcp::ToolResult::Structured(std::move(v), std::move(text));
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
  if (auto e = g.env.Store().Get(id, approval::UnixNow(), &rec); !e.empty()) return Refused(g, "lookup", id, who, e);
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
    if (auto e = g.env.Store().Get(id, approval::UnixNow(), &rec); !e.empty()) return Refused(g, kind, id, caller, e);
    if (rec.args_digest != digest || rec.requester != caller.name || rec.hash != round.value("hash", ""))
      return Refused(g, kind, id, caller, "the request changed since plan " + id + " was made; submit again for a new plan");
    if (rec.state != "pending") return Refused(g, kind, id, caller, "plan " + id + " is " + rec.state + ", not pending");
  } else {
    approval::PolicyDecision policy;
    if (auto e = build(args, &rec, &policy); !e.empty()) return Refused(g, kind, "", caller, e);
    rec.kind = kind;
    rec.args_digest = digest;
    if (auto e = RecordPlan(g.env, &rec, caller); !e.empty()) return mcp::ToolResult::Error(e);
    if (caller.role == "ci") {
      // Non-interactive: the policy approves or refuses, and is recorded as the approver.
      const Actor policy_actor{policy.rule.empty() ? "policy" : policy.rule, caller.role};
      std::string e = Decide(g.env, rec.id, rec.hash, policy.allowed, policy_actor, "policy", policy.Explain(), &rec);
      if (!e.empty() && !policy.allowed) return mcp::ToolResult::Error(e);
      return View(rec, policy.allowed ? (e.empty() ? "" : "approved by policy but failed: " + e)
                                      : "Refused: " + policy.Explain());
    }
  }

  if (!g.in_band || !ctx.ClientCan("elicitation/create")) return View(rec);
  ctx.set_round_state(Json{{"plan_id", rec.id}, {"hash", rec.hash}});
  Json answer;
  try {
    answer = ctx.AskClient(mcp::InputRequest{"approve_plan", "elicitation/create", ApprovalElicitation(rec)},
                           std::chrono::minutes(5));
  } catch (const mcp::RpcError& e) {
    AuditEvent(g.env, "elicitation_unavailable", rec.id, caller, {{"error", e.what()}});
    return View(rec);
  }
  const std::string action = answer.is_object() ? answer.value("action", "") : "";
  if (action != "accept") {
    // "decline" means declined *or unavailable*: some clients decline everything unasked.
    AuditEvent(g.env, "elicitation_declined", rec.id, caller, {{"action", action}});
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
  const Actor user{"user of " + caller.name + " (" + via + ")", caller.role};
  std::string e = Decide(g.env, rec.id, rec.hash, decision == "approve", user, via, "", &rec);
  if (!e.empty() && rec.state != "failed") return mcp::ToolResult::Error(e);
  return View(rec);
}

}  // namespace mt::tools
