// What to do about a supervised job after a diagnosis: restart it, stop supervising it, or
// let it run. A restart fixes what was transient on the cluster (a collective that hung, a
// network or NCCL error, a lost node or one GPU failing, a preemption, a time limit); it
// cannot fix what the program or its configuration does (device or host OOM, a Python
// exception, a model or container that cannot be loaded), and the same failure at the same
// step twice is the program's, whatever its class. A class this table does not know is a
// `stop` for a human to judge: restarting blindly burns the allocation, and a tool that is
// confidently wrong is worse than none.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mt::tools {

// The diagnosis of one attempt (triage, with the hosts triage or TSDB attribution blamed).
struct AttemptDiagnosis {
  std::string job;                        // the attempt's job id
  std::string status;                     // triage status: completed, failed, hang, running, ...
  std::string cls;                        // triage class
  std::optional<int64_t> last_step;       // the last training step the attempt finished
  std::optional<int64_t> checkpoint_step; // the newest checkpoint it saved (resume point)
  std::vector<std::string> culprits;      // hosts blamed (may be empty)
};

struct RestartPolicy {
  int max_restarts = 3;
  // At most this many culprit hosts are excluded on a restart; more would mean the
  // diagnosis blames the fabric, not nodes (restart without exclusions then).
  int max_excluded = 4;
};

struct Decision {
  std::string action;                     // restart | stop | continue
  std::string reason;                     // one sentence, for the audit log and notifications
  std::vector<std::string> exclude;       // hosts to keep the next attempt off
  std::optional<int64_t> resume_step;     // the checkpoint the next attempt resumes from
};

// The decision for `latest` given the chain's earlier attempts (oldest first) and how
// many restarts were made already.
Decision Decide(const AttemptDiagnosis& latest, const std::vector<AttemptDiagnosis>& earlier, int restarts_made,
                const RestartPolicy& policy);

// "restart" | "stop" | "continue" | "" (a class the table does not know): the table itself,
// for the docs and the tests.
std::string ActionForClass(const std::string& cls);

}  // namespace mt::tools
