// The plan: everything a submit will do, fully resolved before anything is written. It is
// what `mt submit --dry-run` prints and what the approval gate will show a human and sign:
// serialisable to JSON and identified by a SHA-256 content hash over its canonical JSON.
//
// Passthrough arguments are data: they travel as JSON strings into the artifact's
// plan.json and reach the training command as argv elements; no shell ever parses them.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"

#include "launcher/launch/model_config.h"

namespace mt::launch {

inline constexpr size_t kMaxJobNameBytes = 243;   // 255 (ext4 path segment) - 12 for "<id>-" and ".log"

// A restart of an earlier job in the same workspace (mt watch's restart decision, approved like
// any plan): the job it replaces, which attempt of the chain it is, the hosts it keeps off
// (slurm: --exclude) and the checkpoint step it resumes from. The tasks see it as
// MT_RESTART_OF, MT_RESTART_ATTEMPT and MT_RESUME_STEP; the framework resumes from its own
// checkpoint directory, as MaxText and torch jobs that reuse their run name do.
struct PlanRestart {
  std::string parent_job;
  int attempt = 1;                              // 1 = the first restart
  std::vector<std::string> exclude;             // host names
  std::optional<int64_t> resume_step;
};

struct PlanRequest {
  std::string model_spec;                       // model[[:alias]:tag]
  std::string backend = "local";                // local | slurm | k8s
  int nodes = 1;
  std::vector<std::string> scheduler_args;      // verbatim (slurm: to sbatch)
  std::vector<std::string> passthrough;         // after `--`
  bool observe = false;
  std::filesystem::path workspace;
  std::filesystem::path models_dir;
  std::filesystem::path repo_dir;               // what the artifact's git summary describes
  // Binaries the job runs (resolved by the caller; see FindLauncherBinary).
  std::string mt_job, mt_exporter, prometheus, simtrain;
  int exporter_port = 9400;
  int prometheus_port_first = 9190, prometheus_port_last = 9199;
  double scrape_interval_s = 10;
  bool pack_tasks = false;                      // slurm: all tasks on one node (single-node test clusters)
  std::map<std::string, int> stage_timeouts;    // stage -> seconds; -1 = none
  std::string now_utc;                          // "YYYYmmdd_HHMMSS"; empty = the clock
  std::string rand_hex;                         // 4 hex digits; empty = random
  std::optional<PlanRestart> restart;
};

struct Plan {
  std::string backend;
  ModelSpec spec;                // spec.model is the resolved config name
  std::string requested_model;   // what the user typed
  std::string exp_tag, job_name;
  std::string job_id;            // local / k8s: fixed now; slurm: assigned by sbatch (empty)
  int nodes = 1;
  std::vector<std::string> scheduler_args, passthrough, overrides;   // overrides: key=value (no _env_)
  std::map<std::string, std::string> env;       // model .env, then _env_ overrides
  std::map<std::string, std::string> model;     // resolved training settings (steps, batch, …)
  std::vector<std::string> train_command;       // argv template ({VAR} from the task env, {PASSTHROUGH})
  std::vector<std::string> submit_argv;         // the exact scheduler command line
  std::filesystem::path workspace, artifact_dir, job_dir, log_path;   // job_dir/log_path: "%j" = job id until known
  std::filesystem::path models_dir, repo_dir;
  std::map<std::string, std::string> binaries;  // mt-job, mt-exporter, prometheus, mt-simtrain
  bool observe = false;
  int exporter_port = 9400, prometheus_port_first = 9190, prometheus_port_last = 9199;
  double scrape_interval_s = 10;
  bool pack_tasks = false;
  std::map<std::string, int> stage_timeouts;
  std::string created;                          // YYYYmmdd_HHMMSS (UTC)
  std::optional<PlanRestart> restart;           // in the JSON (and the hash) only when set
  std::string hash;                             // sha256 of the canonical JSON without "hash"

  nlohmann::json ToJson() const;                // includes hash
  std::string ComputeHash() const;
};

// Every error is detected here, before anything is written: kInvalid for a request that
// cannot be planned, kNotFound for a workspace, model config or binary that is missing.
base::Status BuildPlan(const PlanRequest& req, Plan* out);
// kInvalid for JSON that is not an mt plan or whose content does not match its hash.
base::Status PlanFromJson(const nlohmann::json& j, Plan* out);

// EXP_TAG (reference §2.2): the tag, then each passthrough arg with leading dashes stripped
// and '=' -> '_', joined with '-'.
std::string MakeExpTag(const std::string& tag, const std::vector<std::string>& passthrough);

// Job dir / log names once the id is known.
std::string JobDirName(const Plan& p, const std::string& job_id);

// A readable, multi-line rendering for a terminal.
std::string DescribePlan(const Plan& p);

// Quotes one argument for display in a POSIX shell ('…' with '\'' for quotes); plain words
// stay bare. Used for submit_cmd.txt and the human-readable plan, never to run anything.
std::string ShellQuote(const std::string& arg);
std::string ShellJoin(const std::vector<std::string>& argv);

}  // namespace mt::launch
