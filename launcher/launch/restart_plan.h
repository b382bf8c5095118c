// A restart is the parent job's plan again — same model, settings, passthrough, scheduler
// arguments and observation — with its lineage (plan.h PlanRestart): what `mt watch` asks
// the approval gate to run after a restart decision. Exclusions accumulate along a chain: a
// host kept off attempt 1 stays off attempt 2.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"
#include "launcher/launch/plan.h"

namespace mt::launch {

// The plan a job of this workspace was submitted with (<job dir>/artifact/plan.json, checked
// against its hash). kNotFound for a job mt did not submit here.
base::Status LoadJobPlan(const std::filesystem::path& workspace, const std::string& job, Plan* out);

// Narrows `exclude` to what a restart of `parent` can use: the hosts its scheduler knows
// (Backend::ListNodes), and none when keeping them off would leave fewer nodes than the job
// needs. `*note` says what was dropped and why ("" when nothing was).
void UsableExclusions(const Plan& parent, std::vector<std::string>* exclude, std::string* note);

// `parent`'s plan rebuilt as restart `restart` (new artifact, new job id, the lineage in the
// plan and its hash). The parent's own exclusions are kept.
base::Status BuildRestartPlan(const Plan& parent, PlanRestart restart, Plan* out);

}  // namespace mt::launch
