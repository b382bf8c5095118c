// Where Slurm says a job writes: StdOut / StdErr from `scontrol show job` while slurmctld
// still knows the job (MinJobAge after it ends), else Slurm's default name
// (<WorkDir>/slurm-<id>.out) from `sacct` where accounting exists (sacct in Slurm 22.05 has no
// StdOut field). Bounded: each command runs without a shell and at most 10 s.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace mt::launch {

// Absolute paths, stdout first, then stderr when it is a different file; empty when Slurm is
// not installed or not reachable, or knows no such job.
std::vector<std::filesystem::path> SlurmJobOutputs(const std::string& job_id);

// The nodes Slurm ran a job on: NodeList of `scontrol show job` while slurmctld knows the
// job, else of `sacct` where accounting exists; expanded. `source` names the command;
// empty when Slurm is not reachable, knows no such job, or has not placed it yet.
struct SlurmNodes {
  std::vector<std::string> hosts;
  std::string source;
};
SlurmNodes SlurmJobNodes(const std::string& job_id);

}  // namespace mt::launch
