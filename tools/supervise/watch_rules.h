// What a watch notices between two looks at a job: the pure part of `mt watch` (the loop,
// the backend and the outbox are the caller's). Given what the watch remembered, the
// backend's state and triage's answer at this moment, it says what changed — the backend
// state, a hang (no completed step for longer than the threshold), throughput degradation
// (triage's TGS phases: the last one below the first by more than a set share, for at least
// a set number of steps), the job's end — and, on a hang or an end that is not a success,
// the decision (decision.h). At the end, a decision already made on a hang stands unless the
// end's diagnosis calls for another action (a hang that ends as an OOM: stop, not restart).
// Each finding is reported once: the memory records it, and the
// memory is saved between looks, so a restarted watch does not repeat itself.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mcp/json.h"
#include "tools/supervise/decision.h"

namespace mt::tools {

struct WatchConfig {
  double hang_seconds = 0;           // 0: triage's own rule (max of 600 s and 10 steps)
  // Before the first step (start-up, compilation, NCCL init take far longer than a step): no
  // step for this long is a hang. 0: the larger of 600 s and 10 x hang_seconds.
  double startup_seconds = 0;
  double degrade_pct = 20;           // the last TGS phase this much below the first …
  int64_t degrade_steps = 20;        // … for at least this many steps
  RestartPolicy policy;
};

struct WatchMemory {
  std::string backend_state;         // last seen ("" before the first look)
  std::string phase;                 // "", running, hang, ended
  std::optional<int64_t> hang_step;  // the last step a hang was reported at (-1: before the first)
  bool degraded = false, decided = false;
  std::string decision_action;       // the last decision's action
  bool phase_decided_end = false;    // the end was judged (decided, or the hang's decision kept)
  int restarts = 0;                  // restarts made along the chain
  std::string job;                   // the attempt being watched ("" = the one the watch was given)
  std::string restart_plan;          // the restart plan asked for and not yet resolved
  std::string restart_state;         // its state last reported
  std::optional<AttemptDiagnosis> last_diagnosis;   // behind the last decision
  std::vector<AttemptDiagnosis> earlier;            // the chain's earlier attempts, oldest first
  // The restart ran as `job`: the attempt just left joins `earlier` and the per-attempt
  // state starts over.
  void StartAttempt(const std::string& job);
  Json ToJson() const;
  static WatchMemory FromJson(const Json& j);
};

struct WatchFinding {
  std::string kind;                  // state | hang | degraded | ended | decision
  std::string text;                  // one line for people
  Json detail = Json::object();
};

struct WatchTick {
  std::vector<WatchFinding> findings;
  std::optional<Decision> decision;
  bool finished = false;             // the job ended and its decision (if any) is made
};

// `triage`: triage_log's structured answer at this moment; `backend_state`: the scheduler's
// state ("RUNNING", "COMPLETED", …) or "" when mt did not submit the job.
WatchTick Observe(WatchMemory& memory, const std::string& job, const std::string& backend_state, const Json& triage,
                  const WatchConfig& config);

}  // namespace mt::tools
