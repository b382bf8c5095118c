// Where a job is in its life, read from its log: launch → init → compile → training →
// teardown → ended, and which clock liveness is measured on.
//
// The end comes from any launcher family, not only mt's JOB SUMMARY: a launcher's end line
// with its exit code (`Job end: … (exit code 1)`, `XPK End`, `EXIT_CODE=`), Slurm's
// `CANCELLED AT … [DUE TO …]`, srun's task exits, or the training loop's own end
// (`Training finished`, a progress counter at its total) followed by teardown.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "mcp/json.h"
#include "tools/logs/log_scanner.h"

namespace mt::tools {

// The clock liveness is read on: the log's own time stamps first; the file's mtime only
// when the log has none and the mtime is not later than `now` (a copied or checked-out
// log has an mtime unrelated to its content).
struct LivenessClock {
  std::string source;                 // log_timestamp | file_mtime | none
  int64_t last_activity = kNoTime;    // latest time the log shows activity
  uint64_t last_activity_line = 0;    // 0 for file_mtime
  std::string layout;                 // stamp layout (iso, absl, date, journal, time…)
  bool year_inferred = false;
  std::string note;                   // why a source was (not) used
};
LivenessClock ChooseClock(const LogScan& scan, int64_t mtime, int64_t now);

struct Lifecycle {
  std::string stage;                  // launch | init | compile | training | teardown | ended
  bool ended = false;
  std::string end_source;             // job_summary | launcher_end_line | slurm | srun_task_exit | ""
  std::optional<LineRef> end_line;
  std::optional<int> exit_code;       // from the end evidence
  int64_t end_time = kNoTime;         // time stamp of the end evidence, when it has one
  bool training_finished = false;     // the loop said so or the progress counter reached its total
  std::optional<LineRef> training_end_line;
};
// `finished_all`: the step count reached the configured total.
Lifecycle ReadLifecycle(const LogScan& scan, bool finished_all);

}  // namespace mt::tools
