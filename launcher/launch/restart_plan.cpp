#include "launcher/launch/restart_plan.h"

#include <algorithm>
#include <fstream>

#include "launcher/launch/backend.h"
#include "launcher/launch/submit.h"

namespace mt::launch {

using base::Errc;
using base::Status;
namespace fs = std::filesystem;

Status LoadJobPlan(const fs::path& workspace, const std::string& job, Plan* out) {
  nlohmann::json st;
  if (Status s = JobStatus(workspace, job, &st); !s.ok()) return s;
  const fs::path file = fs::path(st.value("job_dir", "")) / "artifact" / "plan.json";
  std::ifstream in(file);
  if (!in) return Status(Errc::kNotFound, "job " + job + " has no plan at " + file.string());
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return Status(Errc::kInvalid, file.string() + " is not JSON");
  return PlanFromJson(j, out).In(file.string());
}

void UsableExclusions(const Plan& parent, std::vector<std::string>* exclude, std::string* note) {
  note->clear();
  std::sort(exclude->begin(), exclude->end());
  exclude->erase(std::unique(exclude->begin(), exclude->end()), exclude->end());
  if (exclude->empty()) return;
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& h : v) s += (s.empty() ? "" : ", ") + h;
    return s;
  };
  std::vector<std::string> known;
  const Backend* backend = FindBackend(parent.backend);
  if (backend == nullptr) return;
  if (Status st = backend->ListNodes(&known); !st.ok()) {
    *note = "not excluded (" + list(*exclude) + "): " + st.message();
    exclude->clear();
    return;
  }
  std::vector<std::string> usable, unknown;
  for (const auto& h : *exclude)
    (std::find(known.begin(), known.end(), h) != known.end() ? usable : unknown).push_back(h);
  if (!unknown.empty()) *note = "not excluded, unknown to the scheduler: " + list(unknown);
  const size_t needed = parent.pack_tasks ? 1 : static_cast<size_t>(parent.nodes);
  if (!usable.empty() && known.size() < usable.size() + needed) {
    *note += std::string(note->empty() ? "" : "; ") + "not excluded: keeping " + list(usable) + " off would leave " +
             std::to_string(known.size() - usable.size()) + " of " + std::to_string(known.size()) + " nodes for a job that needs " +
             std::to_string(needed);
    usable.clear();
  }
  *exclude = std::move(usable);
}

Status BuildRestartPlan(const Plan& parent, PlanRestart restart, Plan* out) {
  PlanRequest req;
  req.model_spec = parent.requested_model;
  req.backend = parent.backend;
  req.nodes = parent.nodes;
  req.scheduler_args = parent.scheduler_args;
  req.passthrough = parent.passthrough;
  req.observe = parent.observe;
  req.workspace = parent.workspace;
  req.models_dir = parent.models_dir;
  req.repo_dir = parent.repo_dir;
  auto binary = [&](const char* name) {
    auto it = parent.binaries.find(name);
    return it == parent.binaries.end() ? std::string() : it->second;
  };
  req.mt_job = binary("mt-job");
  req.mt_exporter = binary("mt-exporter");
  req.prometheus = binary("prometheus");
  req.simtrain = binary("mt-simtrain");
  req.exporter_port = parent.exporter_port;
  req.prometheus_port_first = parent.prometheus_port_first;
  req.prometheus_port_last = parent.prometheus_port_last;
  req.scrape_interval_s = parent.scrape_interval_s;
  req.pack_tasks = parent.pack_tasks;
  req.stage_timeouts = parent.stage_timeouts;
  if (parent.restart) restart.exclude.insert(restart.exclude.end(), parent.restart->exclude.begin(), parent.restart->exclude.end());
  std::sort(restart.exclude.begin(), restart.exclude.end());
  restart.exclude.erase(std::unique(restart.exclude.begin(), restart.exclude.end()), restart.exclude.end());
  req.restart = std::move(restart);
  return BuildPlan(req, out);
}

}  // namespace mt::launch
