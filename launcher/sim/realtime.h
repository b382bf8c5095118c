// Real-time mode: one simulated run played out on the wall clock, for live tests of the
// exporter, the launcher and the tools. Each training step takes `step_seconds`; the
// numbers the run prints (seconds per step, TGS, loss) are the scenario's, the timestamps
// are real. Outputs, as they happen:
//   - the job log: the whole multi-rank log to `log_path`, or (rank >= 0) only that rank's
//     training output, unlabelled, on stdout, as one srun task prints it;
//   - the TensorBoard event file under out_dir/<run_name>/tensorboard/<run_name>/ (rank 0
//     or whole-job mode), flushed after every step;
//   - a fake procfs/sysfs tree per node (fake_root), see FakeRoot.
// SIGTERM / SIGINT end the run with exit code 143 / 130, like a cancelled srun task.
#pragma once

#include <filesystem>
#include <string>

#include "launcher/sim/scenario.h"
#include "launcher/sim/timeline.h"

namespace mt::launch::sim {

struct RealtimeOptions {
  double step_seconds = 0.2;        // wall-clock seconds per training step
  double startup_seconds = 1.0;     // wall-clock seconds from start to the first step
  double root_interval = 0.5;       // how often the fake root is rewritten
  double max_seconds = 0;           // > 0: stop (exit 143) after this long, e.g. for a hang
  int rank = -1;                    // >= 0: print only this task's output on stdout
  std::filesystem::path log_path;   // whole-job mode: where the log goes ("" = stdout)
  std::filesystem::path out_dir;    // OUTPUT_PATH: the event file goes below it ("" = none)
  std::filesystem::path fake_root;  // "" = none; whole-job mode writes <fake_root>/<host>/…
  std::string event_host;           // host name in the event file name ("" = the task's host)
};

// The scenario's timeline moved onto the wall clock starting at `now`.
Timeline RealtimeTimeline(const Scenario& s, double now, const RealtimeOptions& opts);

// Runs until the simulated job ends (or a signal / max_seconds). Returns the process exit
// code the run should end with (0, the scenario's failure code, 143 / 130), or -1 with
// *error set when an output could not be written.
int RunRealtime(const Scenario& s, const RealtimeOptions& opts, std::string* error);

}  // namespace mt::launch::sim
