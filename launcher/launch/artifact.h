// The artifact snapshot: an immutable directory the job runs from, so that editing configs
// after submitting never changes a queued job (reference §7):
//   <ws>/.artifacts/artifact_<YYYYmmdd_HHMMSS>_<4hex>/
//       plan.json  submit_cmd.txt  git_summary.txt  configs/models/<model>.yml[.env]
//       scenario.yaml (simulator runs)  job.sbatch (slurm)  job.k8s.yaml (k8s)
// Built in a hidden temp dir and renamed into place; files 0444, dirs 0555.
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "launcher/launch/plan.h"

namespace mt::launch {

// `git` facts about repo (branch, last commit, diff stat, changes, untracked), in the
// sections of reference §3.1; a note when repo is not a git checkout.
std::string GitSummary(const std::filesystem::path& repo);

// The mt-simtrain scenario the default training command reads.
std::string SimScenarioYaml(const Plan& p);

// The sbatch script: it only hands the plan to `mt-job run`, which prints the header, runs
// the stages with their timeouts, srun's the tasks and writes the JOB SUMMARY.
std::string SlurmBatchScript(const Plan& p);

// Creates plan.artifact_dir. `submit_cmd` is the command line the user typed. kConflict
// when it exists, else the file-system error; on error nothing is left behind.
base::Status CreateArtifact(const Plan& p, const std::vector<std::string>& submit_cmd,
                           const std::map<std::string, std::string>& extra_files);

// Removes a tree this launcher made read-only.
void RemoveTree(const std::filesystem::path& dir);

}  // namespace mt::launch
