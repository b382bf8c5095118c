// The pieces of a job log that mt-job writes for a real run and the simulator reproduces
// for a simulated one, written once so that both produce the same bytes (and the log
// scanner in tools/logs reads one format). Formats: reference/maxtext-slurm.md §3.
#pragma once
#include <string>

namespace mt::launch {

// "35h 12m 3s", "12m 3s" or "45s", as the JOB SUMMARY prints the wall time.
std::string FormatWall(double seconds);

// The `srun -l` label for `task` in a step with `ntasks` tasks: right-aligned to the
// width of the largest task id, then ": ".
std::string RankLabel(int task, int ntasks);

struct JobSummary {
  std::string job_id, job_name, model;
  int nodes = 0;
  double wall_seconds = 0;
  int exit_code = 0;
  std::string reason;   // after "FAILED (exit N) — "; unused on success
};

// The JOB SUMMARY block, its lines joined by '\n', without a final newline.
std::string RenderJobSummary(const JobSummary& s);

}  // namespace mt::launch
