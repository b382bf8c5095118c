// Submitting a plan and controlling the job afterwards. Every backend leaves the same
// workspace layout (reference §2.3): the artifact, <id>-<name>.log, and <id>-<name>/ with
// `artifact` and `log` links and .mt-launch.json (backend, id, process group, plan hash).
// A submit that fails leaves nothing: no artifact, no job dir, no log. The per-scheduler
// parts live behind launch/backend.h; these functions dispatch through it.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "launcher/launch/plan.h"

namespace mt::launch {

struct SubmitResult {
  std::string job_id;
  std::filesystem::path job_dir, log, artifact;
};

// Fills the binaries a job runs (mt-job, mt-simtrain, mt-exporter, prometheus) from
// $MT_JOB_BIN / $MT_SIMTRAIN / $MT_EXPORTER_BIN / $MT_PROMETHEUS_BIN, the running executable's
// directory and its build-tree siblings, then PATH; leaves empty what is not found.
void ResolveBinaries(PlanRequest* req);

// The files a plan adds to its artifact (scenario.yaml, job.sbatch, job.k8s.yaml), by name.
std::map<std::string, std::string> PlanFiles(const Plan& p);

// `submit_cmd`: the command line the user typed (for submit_cmd.txt).
base::Status Submit(const Plan& p, const std::vector<std::string>& submit_cmd, SubmitResult* r);

// The first free loopback port in [first, last], or -1.
int FirstFreePort(int first, int last);

// Job control by id (or job dir name) within the workspace; only jobs this launcher
// submitted (their dir has .mt-launch.json) are touched.
// Status JSON: {id, backend, state, exit_code|null, job_dir, log, source}. kNotFound for a job
// mt did not submit in this workspace, kInvalid for a malformed or ambiguous id; CancelJob
// adds the backend's errors (Backend::Cancel).
base::Status JobStatus(const std::filesystem::path& workspace, const std::string& job, nlohmann::json* out);
base::Status CancelJob(const std::filesystem::path& workspace, const std::string& job, std::string* message);

}  // namespace mt::launch
