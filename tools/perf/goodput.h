// Goodput of a run that was restarted: of the wall time from the first attempt's start to the
// last one's end, how much trained steps that were kept, and where the rest went. Pure: the
// attempts' logs are already scanned and their restart approvals already read.
//
// The split, per attempt (all from the logs' own clocks, step durations from the step lines):
//   productive  the kept steps at the run's typical (median) step time;
//   startup     from the attempt's first stamped line to the start of its first step, plus
//               the first step's excess over the median (compilation, a checkpoint restore);
//   checkpoint  the excess over the median of steps next to a "Saved a checkpoint";
//   redone      every step a later attempt did again (after the checkpoint it resumed from);
//   failure     from the last step to the attempt's end (the hang, detection, the cancel);
//   approval    between attempts: the restart plan pending for a human (its record's
//               created → decided);
//   restart     the rest of the gap between attempts (cancel, submission, queue, back-off);
//   other       what remains (slow steps, data stalls, teardown of the last attempt).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/logs/log_scanner.h"
#include "tools/perf/perf_answer.h"

namespace mt::tools {

struct ChainAttempt {
  std::string job;
  int attempt = 0;                        // 0: the original job; k: its k-th restart
  const LogScan* scan = nullptr;          // its log; nullptr when it has none yet
  std::optional<int64_t> resume_step;     // it resumed after this step (restart plans only)
  std::string cls, status;                // triage's answer for it
  // The restart plan that started it (attempts >= 1): unix seconds, 0 when unknown.
  int64_t requested = 0, decided = 0;
  std::string approved_via;               // policy | terminal | web | …
};

// `chain`: oldest first. An attempt without a scan counts in the chain but not in the times.
// Its total_seconds is 0 (with a note saying why) when no attempt has time-stamped steps.
GoodputView ComputeGoodput(const std::vector<ChainAttempt>& chain);

}  // namespace mt::tools
