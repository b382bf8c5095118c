// watch_job: supervise a running job over MCP (what `mt watch` does, tools/catalog/job_watch.h):
// its state, a hang, degradation, its end, the decision, and a restart through the approval
// gate. Long-running: as an MCP task where the client negotiated the Tasks extension (each
// finding a progress notification, every finding in the result); otherwise a background
// watch in this server whose findings `status` reads. One watcher per job, whoever runs it.
//
// Restarts are asked for as requester "watch_job (<caller>)" with role `supervisor`: they run
// only when mt.yaml's `policy.supervisor` allows the plan, else they wait for a human. The
// caller chooses nothing in the plan: it is the parent's own, already approved, plan again.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "mcp/registry.h"
#include "mcp/typed.h"
#include "tools/catalog/product_tools.h"

namespace mt::tools {

struct WatchJobInput {
  std::string action = "watch";
  std::optional<std::string> job;
  std::optional<double> hang_seconds, startup_seconds, degrade_pct, interval_seconds, timeout_seconds;
  std::optional<int64_t> max_restarts;
  bool once = false;

  template <class F>
  static void Fields(F& f) {
    f("action", &WatchJobInput::action,
      {.description = "watch: start (or, with once, one look); status: the findings so far; stop: end this server's "
                      "background watch; list: every watch of the workspace",
       .one_of = {"watch", "status", "stop", "list"}, .default_value = "watch"});
    f("job", &WatchJobInput::job, {.description = "job id or job directory name (watch, status, stop)", .min_length = 1, .max_length = 1024});
    f("hang_seconds", &WatchJobInput::hang_seconds,
      {.description = "no completed step for this long is a hang (default: triage's rule, at least 600 s)", .minimum = 1, .maximum = 604800});
    f("startup_seconds", &WatchJobInput::startup_seconds,
      {.description = "before the first step, no step for this long is a hang (the larger of 600 s and 10 x hang_seconds)",
       .minimum = 1, .maximum = 604800});
    f("degrade_pct", &WatchJobInput::degrade_pct, {.description = "TGS drop that counts as degradation (20)", .minimum = 1, .maximum = 99});
    f("interval_seconds", &WatchJobInput::interval_seconds, {.description = "seconds between looks (30)", .minimum = 1, .maximum = 3600});
    f("timeout_seconds", &WatchJobInput::timeout_seconds,
      {.description = "stop watching after this long (86400)", .minimum = 1, .maximum = 604800});
    f("max_restarts", &WatchJobInput::max_restarts, {.description = "restarts the chain may make (3)", .minimum = 0, .maximum = 100});
    f("once", &WatchJobInput::once, {.description = "one look now, then return", .default_value = false});
  }
};

struct WatchFindingView {
  std::string time, kind, text;
  Json detail = Json::object();
  template <class F>
  static void Fields(F& f) {
    f("time", &WatchFindingView::time);
    f("kind", &WatchFindingView::kind, {.one_of = {"state", "hang", "degraded", "ended", "decision", "restart"}});
    f("text", &WatchFindingView::text);
    f("detail", &WatchFindingView::detail, {.schema = Json{{"type", "object"}}});
  }
};

struct WatchView {
  std::string chain, job, state, resource;
  int64_t restarts = 0;
  mcp::Nullable<std::string> decision, pending_plan;
  std::vector<WatchFindingView> findings;
  template <class F>
  static void Fields(F& f) {
    f("chain", &WatchView::chain, {.description = "the job the watch began with"});
    f("job", &WatchView::job, {.description = "the attempt watched now (a restart's job after a restart)"});
    f("state", &WatchView::state,
      {.description = "watching (this server), ended, timeout, cancelled, stopped, or idle (nobody here watches it)",
       .one_of = {"watching", "ended", "timeout", "cancelled", "stopped", "idle"}});
    f("resource", &WatchView::resource,
      {.description = "mt://watches/CHAIN: its findings; subscribe (resources/subscribe or subscriptions/listen) to be "
                      "notified (notifications/resources/updated) of each new one"});
    f("restarts", &WatchView::restarts);
    f("decision", &WatchView::decision, {.description = "the last decision's action"});
    f("pending_plan", &WatchView::pending_plan, {.description = "a restart plan waiting for a human (mt approve ID)"});
    f("findings", &WatchView::findings, {.description = "the findings of this call (watch), or the last 50 (status)"});
  }
};

struct WatchJobAnswer {
  std::string action;
  std::vector<WatchView> watches;
  std::string message;
  template <class F>
  static void Fields(F& f) {
    f("action", &WatchJobAnswer::action);
    f("watches", &WatchJobAnswer::watches);
    f("message", &WatchJobAnswer::message);
  }
};

void RegisterWatchJob(mcp::Registry& registry, const ProductOptions& options);

}  // namespace mt::tools
