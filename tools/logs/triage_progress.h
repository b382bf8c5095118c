// Training progress from a scanned log (job-log-triage step 5): where the run is, how
// fast it goes, whether it stopped, what a crash now would lose, and when it will finish.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "tools/logs/log_scanner.h"
#include "tools/logs/triage_lifecycle.h"

namespace mt::tools {

// PASSTHROUGH_ARGS "key=value" (last wins) or, failing that, `Config param key`.
std::optional<std::string> JobSetting(const LogScan& scan, const std::string& key);
// The same setting as an integer (nullopt when absent or not a number).
std::optional<int64_t> JobSettingInt(const LogScan& scan, const std::string& key);

struct Progress {
  std::optional<int64_t> first_step, last_step, restored_from_step;
  size_t steps_seen = 0;
  double entries_per_step = 0;
  std::optional<double> steady_step_seconds;   // median, steps after the first 5
  std::optional<double> recent_step_seconds;   // median of the last 20 of those
  int64_t last_progress_time = kNoTime;
  std::string last_progress_source;            // line_timestamp | log_activity | file_mtime | none
  std::optional<double> seconds_since_progress;
  std::optional<int64_t> expected_step_now;
  double step_seconds_sum = 0;                 // one rank only (the lowest that logged steps)
  std::optional<int> step_seconds_rank;
  std::optional<double> wall_seconds;          // first step start .. last step, from time stamps
  std::optional<double> unaccounted_seconds;   // wall - sum of step seconds
  bool stall_detected = false;                 // unaccounted > 15 min
  std::optional<int64_t> total_steps;
  std::optional<int64_t> checkpoint_period;
  bool checkpoint_period_assumed = false;
  std::optional<int64_t> last_checkpoint_step;
  std::optional<int64_t> progress_lost_steps;
  std::optional<double> eta_seconds;
  std::optional<double> percent_complete;
  // Hang rule: no progress for longer than the threshold.
  double hang_threshold_seconds = 0;
  std::optional<double> silent_seconds;        // until now (running) or until the end
  bool stalled = false;
  std::string hang_rule;
};

// `clock` gives the time of the last activity (the fallback for the time of the last
// progress when step lines carry no stamps), `end_time` the time the job ended when the
// log says it ended (kNoTime if not). With no usable clock nothing is called stalled.
Progress ComputeProgress(const LogScan& scan, const LivenessClock& clock, int64_t now, int64_t end_time);

}  // namespace mt::tools
