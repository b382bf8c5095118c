// When each training step completed, from the job's log alone: what a site's central store
// cannot say (it holds no training scalars, so no tb_step to map steps to wall time), and
// what attribution needs to line hosts up with the slow steps.
//
// Best first: the step lines' own time stamps (steps without one placed between their
// stamped neighbours by their `seconds:` durations); else the durations alone, anchored at
// the job's start as the caller knows it (the scheduler's, the log's first stamp) plus the
// stages the log says ran before training (preflight, image pull: "== X END (42s) ==");
// else at a time stamp the log writes after its last step; else at the job's end. The
// start is the better anchor: what runs before the first step is minutes of startup, what
// runs after the last one may be hours of a hang (a "CANCELLED AT" stamp at the time
// limit). `source` says which, so the answer can.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/logs/log_scanner.h"

namespace mt::tools {

struct StepTime {
  int64_t step = 0;
  double time = 0;   // seconds since the epoch
};

struct StepClock {
  std::vector<StepTime> steps;   // ascending step
  std::string source;            // "" when nothing places the steps in time
};

// `anchor_label` names where the anchors came from ("the scheduler", "the log's first time stamp").
StepClock StepClockFromLog(const LogScan& scan, std::optional<double> start_anchor, std::optional<double> end_anchor,
                           const std::string& anchor_label);

}  // namespace mt::tools
