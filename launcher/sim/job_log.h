// Renders the job log that the original launcher writes (_job.sbatch + srun -l + MaxText):
// KEY=value header, stage timeouts, git summary, stage markers, per-rank training output
// with `srun -l` labels, failure signatures, NODE_EXIT lines and the JOB SUMMARY block.
// Formats: reference/maxtext-slurm.md §3.
#pragma once

#include <string>

#include "launcher/launch/job_log_format.h"
#include "launcher/sim/scenario.h"
#include "launcher/sim/timeline.h"

namespace mt::launch::sim {

// Paths the log refers to, as seen inside the container and on the login node.
struct LogPaths {
  std::string artifact_dir;   // e.g. /shared/outputs/.artifacts/artifact_20260210_061200_1a2b
  std::string container_out;  // e.g. /outputs/<job_dir> (base_output_directory)
};

// The whole log as one string. Deterministic for a given scenario and timeline.
std::string RenderJobLog(const Scenario& s, const Timeline& tl, const LogPaths& paths);

// The wall-time format and the `srun -l` label are mt-job's (launcher/launch/job_log_format.h).
using launch::FormatWall;
using launch::RankLabel;

// One `completed step:` line (without the rank label), with MFU when the peak is known.
std::string StepLine(const Scenario& s, const StepRecord& r);

}  // namespace mt::launch::sim
