// submit_job: an agent proposes a training job; the server builds the launcher plan (exact
// command line, resources, hash) and nothing reaches the cluster until a human approves
// that plan (in-band elicitation or `mt approve`) or the CI policy allows it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "mcp/typed.h"
#include "mcp/registry.h"
#include "tools/gate/approval_mcp.h"
#include "tools/catalog/product_tools.h"

namespace mt::tools {

// Scheduler options go to sbatch verbatim: a conservative character set.
inline const mcp::Spec kSchedulerArg{.min_length = 1, .max_length = 256, .pattern = "^[A-Za-z0-9_.,:\\[\\]-]+$"};

// Every field optional (defaults shown in the schema): a plan_id lookup sends only plan_id,
// and the approval gate digests exactly the arguments given.
struct SubmitJobInput {
  std::optional<std::string> model;
  std::optional<int64_t> nodes;
  std::optional<std::string> backend;
  std::optional<std::string> partition, time, nodelist, exclude;
  std::optional<std::vector<std::string>> passthrough;
  std::optional<bool> observe;
  std::optional<std::string> plan_id;

  template <class F>
  static void Fields(F& f) {
    f("model", &SubmitJobInput::model,
      {.description = "model[[:alias]:tag], a config in configs/models", .min_length = 1, .max_length = 256});
    f("nodes", &SubmitJobInput::nodes, {.minimum = 1, .maximum = 4096, .default_value = 1});
    f("backend", &SubmitJobInput::backend, {.one_of = {"slurm", "local", "k8s"}, .default_value = "slurm"});
    f("partition", &SubmitJobInput::partition, kSchedulerArg);
    f("time", &SubmitJobInput::time, kSchedulerArg);
    f("nodelist", &SubmitJobInput::nodelist, kSchedulerArg);
    mcp::Spec exclude = kSchedulerArg;
    exclude.description = "nodes to keep the job off (e.g. a bad node triage found)";
    f("exclude", &SubmitJobInput::exclude, exclude);
    f("passthrough", &SubmitJobInput::passthrough,
      {.description = "key=value overrides for the training run (e.g. steps=50), _env_KEY=VALUE",
       .schema = Json{{"items", {{"type", "string"}, {"maxLength", 4096}}}},
       .max_items = 64});
    f("observe", &SubmitJobInput::observe,
      {.description = "run mt-exporter + Prometheus with the job", .default_value = false});
    f("plan_id", &SubmitJobInput::plan_id,
      {.description = "look up an earlier plan's state instead of planning", .max_length = 256});
  }
};

mcp::Tool SubmitJobTool(const GateOptions& gate);
void RegisterSubmitJob(mcp::Registry& registry, const ProductOptions& options);

// The launcher request the tool's arguments describe (scheduler options become sbatch
// arguments; MT_SLURM_PACK_TASKS=1 packs the tasks on one node, as `mt submit` does).
launch::PlanRequest SubmitRequestFrom(const SubmitJobInput& input, const ApprovalEnv& env);

// The gate options a ProductOptions implies (approvals under the workspace by default).
GateOptions GateOptionsFrom(const ProductOptions& options);

}  // namespace mt::tools
