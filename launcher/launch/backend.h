// One seam per scheduler (local process group, Slurm, Kubernetes): how a plan is submitted
// and what it adds to its artifact, and how a submitted job's state is read and the job
// cancelled. submit.h dispatches through it; the job watch and restarts of the supervision
// work use the same three verbs (submit, status, cancel) whatever the backend.
#pragma once
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "launcher/launch/plan.h"
#include "launcher/launch/submit.h"

namespace mt::launch {

// A job as its launch record found it (submit.h FindJob).
struct LaunchedJob {
  std::string id;
  std::filesystem::path dir, log;
  nlohmann::json record;   // .mt-launch.json
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;

  // Planning: whether the plan may carry scheduler arguments (--partition, ...), the job
  // id when the backend chooses it before submitting ("" when the scheduler assigns it),
  // the submit command line and the files it reads from the artifact.
  virtual bool takes_scheduler_args() const { return false; }
  virtual std::string JobIdBeforeSubmit(const Plan& p, const std::string& rand_hex) const = 0;
  virtual std::vector<std::string> SubmitCommand(const Plan& p) const = 0;
  virtual void AddPlanFiles(const Plan& p, std::map<std::string, std::string>* files) const { (void)p, (void)files; }

  // Submits the plan whose artifact exists; on error (kFailed: the scheduler refused or its
  // command failed; kConflict: the job dir exists) leaves no job dir behind.
  virtual base::Status Submit(const Plan& p, SubmitResult* r) const = 0;
  // Fills state / exit_code / source of `status` (which holds the common fields).
  virtual void FillStatus(const LaunchedJob& job, nlohmann::json* status) const = 0;
  // kConflict for a job that is not running (local), kFailed when the scheduler refuses.
  virtual base::Status Cancel(const LaunchedJob& job, std::string* message) const = 0;
  // The hosts the scheduler can place a job on (slurm: sinfo's nodes), for restarts that keep
  // hosts off: excluding a host the scheduler does not know leaves a Slurm job pending
  // forever ("Requested node configuration is not available"). kInvalid where the backend
  // cannot exclude hosts.
  virtual base::Status ListNodes(std::vector<std::string>* nodes) const {
    (void)nodes;
    return base::Status(base::Errc::kInvalid, "the " + name() + " backend cannot keep a job off hosts");
  }
};

// nullptr for a name no backend has.
const Backend* FindBackend(const std::string& name);
// "local, slurm or k8s" for messages.
std::string BackendNamesText();

}  // namespace mt::launch
