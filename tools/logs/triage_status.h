// The job's status and its root-cause class, from the lifecycle, the liveness clock,
// progress and the candidate classes (triage_root_cause.h has the rule itself).
#pragma once
#include <string>

#include "tools/logs/log_scanner.h"
#include "tools/logs/triage_lifecycle.h"
#include "tools/logs/triage_progress.h"
#include "tools/logs/triage_root_cause.h"

namespace mt::tools {

struct StatusFacts {
  const LogScan& log;              // the main log
  const Lifecycle& life;
  const LivenessClock& clock;
  const Progress& progress;
  bool finished_all = false;       // the last step reached the configured total
  bool fatal_present = false;      // terminal fatal evidence (triage_evidence.h FatalPresent)
  bool summary_cancel = false;     // JOB SUMMARY FAILED with 130/143
};

struct JobStatus {
  std::string status;              // completed failed cancelled running hang unknown
  bool soft_success = false;       // all steps done, a failure in teardown
  std::string undecided;           // when unknown: what is missing and what would decide it
};

JobStatus DecideStatus(const StatusFacts& facts);

struct Verdict {
  std::string cls;
  std::string rule;                // root_cause_rule
};

// The class: `completed` for a completed job, else the root-cause rule over `cands`, else
// the status itself. May turn `status` into running (nothing fatal, nothing stalled) and
// fill its `undecided`.
Verdict DecideClass(JobStatus* status, const Candidates& cands, const std::string& primary, const Lifecycle& life,
                    bool hang_before_heartbeat);

}  // namespace mt::tools
