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

}  // namespace mt::launch
