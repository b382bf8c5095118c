// Where Slurm says a job writes: StdOut / StdErr from `scontrol show job` while slurmctld
// still knows the job (MinJobAge after it ends), else Slurm's default name
// (<WorkDir>/slurm-<id>.out) from `sacct` where accounting exists (sacct in Slurm 22.05 has no
// StdOut field). Bounded: each command runs without a shell and at most 10 s.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace mt::launch {

// Absolute paths, stdout first, then stderr when it is a different file; empty when Slurm is
// not installed or not reachable, or knows no such job.
std::vector<std::filesystem::path> SlurmJobOutputs(const std::string& job_id);

// Where and when Slurm ran a job: NodeList, StartTime and EndTime of `scontrol show job`
// while slurmctld knows the job, else of `sacct` where accounting exists. Hosts expanded;
// times as Unix seconds, read in this machine's time zone (Slurm prints local time without
// a zone); no start for a job not started yet, no end for one still running. `source` names
// the command; empty when Slurm is not reachable or knows no such job.
struct SlurmPlacement {
  std::vector<std::string> hosts;
  std::optional<double> start, end;
  std::string source;
};
SlurmPlacement SlurmJobPlacement(const std::string& job_id);

// "2026-11-27T19:00:03" (Slurm's local time, no zone) as Unix seconds in this machine's time
// zone; nothing for "Unknown", "None" or a time still in the future (a pending job's estimate).
std::optional<double> SlurmTime(const std::string& text);

}  // namespace mt::launch
