// One supervised job, look by look: what `mt watch` and the watch_job tool both run. Each look
// reads the scheduler's state (jobs mt submitted) and triages the log at that moment; the
// rules (tools/supervise/watch_rules.h) say what changed and decide; findings go to the
// chain's outbox (delivered to the webhooks) and to the caller, decisions to the audit log,
// blamed hosts to the node ledger; a restart decision on a job mt submitted becomes a restart
// plan through the approval gate (tools/gate/restart_request.h), and once it is submitted the
// watch follows the new job. State lives in <workspace>/.mt/watch/<chain>/ (memory.json,
// outbox.jsonl), so a watch stopped and started again — by the CLI or the server — repeats
// nothing and never submits a restart twice.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tools/gate/approval_gate.h"
#include "tools/logs/workspace.h"
#include "tools/supervise/notifier.h"
#include "tools/supervise/watch_rules.h"

namespace mt::tools {

struct JobWatchEnv {
  std::filesystem::path workspace;
  ApprovalEnv approvals;              // store, audit log, policy
  std::vector<Webhook> webhooks;      // mt.yaml notifications.webhooks
};

struct JobWatchOptions {
  WatchConfig rules;
  Actor requester;                    // who asks for restarts (role: the policy rule that may run them)
  // Problems that do not stop the watch (a notice not recorded, a ledger not updated, an
  // exclusion dropped), one sentence each.
  std::function<void(const std::string&)> warn = [](const std::string&) {};
};

class JobWatch {
 public:
  // `target`: a job id (or job dir name) of the workspace, or a log file. Throws
  // std::runtime_error naming the problem (no such job, state dir not writable, the chain
  // already watched by another process: one watcher per chain, held by a lock on
  // <dir>/watch.lock until this object goes).
  JobWatch(JobWatchEnv env, const std::string& target, JobWatchOptions options);
  ~JobWatch();
  JobWatch(const JobWatch&) = delete;
  JobWatch& operator=(const JobWatch&) = delete;

  // One look; every finding, as it is recorded, to `sink`. True when the watch is over: the
  // job ended, its decision is made and no restart is pending.
  bool Look(const std::function<void(int64_t now, const WatchFinding&)>& sink);

  const std::string& chain() const { return id_; }          // the job (or log) the watch began with
  const std::string& current_job() const { return target_; } // the attempt being watched
  const std::filesystem::path& dir() const { return dir_; }

 private:
  void Report(int64_t now, const WatchFinding& f, const std::function<void(int64_t, const WatchFinding&)>& sink);
  void Follow(const std::string& job);
  void AskRestart(const Decision& d, int64_t now, const std::function<void(int64_t, const WatchFinding&)>& sink);
  void FollowRestart(int64_t now, const std::function<void(int64_t, const WatchFinding&)>& sink);
  void RecordInLedger(const WatchFinding& f, const Json& triage, int64_t now);
  void ProbeRestart();
  std::string BackendState() const;

  JobWatchEnv env_;
  JobWatchOptions options_;
  JobFiles job_;
  std::string target_, id_;
  std::filesystem::path dir_;         // <workspace>/.mt/watch/<chain key>
  int lock_fd_ = -1;
  std::string probed_for_, probe_id_;   // the attempt whose restart plan id is known, and that id
  // The job's own TSDB's answer to "which host died" (query_tsdb playbook auto), asked once
  // per attempt when a decision is near; null when there is no TSDB or it could not tell.
  void AttributeFromTsdb(Json* triage);
  std::string attributed_for_;
  Json attribution_;
  WatchMemory memory_;
  Outbox outbox_;
};

}  // namespace mt::tools
