#include "tools/catalog/submit_job_tool.h"

#include <cstdlib>

#include "launcher/launch/model_config.h"
#include "launcher/launch/submit.h"

namespace mt::tools {
namespace approval = launch::approval;

namespace {

constexpr const char* kDescription =
    "Propose a training job. The server builds the exact launcher plan (sbatch command line, nodes, "
    "model settings, passthrough args, plan hash) and asks a human to approve it: your client may show "
    "an approval form; otherwise the result is `pending_approval` with a plan_id and a human runs "
    "`mt approve <plan_id>` on the host. Nothing is submitted without that approval (or, for the ci "
    "role, the server's CI policy). Call again with only `plan_id` to see the state (pending, "
    "submitted with the job id, denied, expired). Any change to the request is a new plan.";

}  // namespace

GateOptions GateOptionsFrom(const ProductOptions& o) {
  GateOptions g;
  g.env = o.approvals;
  if (g.env.workspace.empty()) g.env.workspace = o.workspace;
  if (g.env.approvals_dir.empty()) g.env.approvals_dir = g.env.workspace / ".mt" / "approvals";
  if (g.env.audit_log.empty()) g.env.audit_log = g.env.workspace / ".mt" / "audit.jsonl";
  g.in_band = o.in_band_approval;
  g.page_url = o.approval_page_url;
  g.url_wait = o.approval_url_wait;
  return g;
}

launch::PlanRequest SubmitRequestFrom(const SubmitJobInput& in, const ApprovalEnv& env) {
  launch::PlanRequest req;
  req.model_spec = in.model.value_or("");
  req.backend = in.backend.value_or("slurm");
  req.nodes = static_cast<int>(in.nodes.value_or(1));
  for (auto [opt, value] : {std::pair{"partition", &in.partition}, std::pair{"time", &in.time},
                            std::pair{"nodelist", &in.nodelist}, std::pair{"exclude", &in.exclude}})
    if (*value) req.scheduler_args.push_back(std::string("--") + opt + "=" + **value);
  req.passthrough = in.passthrough.value_or(std::vector<std::string>{});
  req.observe = in.observe.value_or(false);
  req.workspace = env.workspace;
  req.models_dir = env.models_dir.empty() ? launch::DefaultModelsDir() : env.models_dir;
  req.repo_dir = std::filesystem::absolute(req.models_dir).parent_path().parent_path();
  if (const char* v = std::getenv("MT_SLURM_PACK_TASKS"); v && std::string(v) == "1") req.pack_tasks = true;
  launch::ResolveBinaries(&req);
  return req;
}

mcp::Tool SubmitJobTool(const GateOptions& gate) {
  return mcp::MakeTypedTool<SubmitJobInput, PlanView>(
      {.name = "submit_job",
       .title = "Submit a training job (human approval required)",
       .description = kDescription,
       .annotations = mcp::ToolAnnotations{false, false, false, true}},
      [gate](const SubmitJobInput& in, mcp::CallContext& ctx) -> mcp::ToolResult {
        if (!in.plan_id && !in.model)
          return mcp::ToolResult::Error("submit_job: `model` is required (or `plan_id` to look up a plan)");
        return GatedCall(gate, "submit", mcp::Encode(in), ctx,
                         [&gate, &ctx](const Json& a, approval::PlanRecord* rec, approval::PolicyDecision* policy) -> std::string {
                           launch::PlanRequest req = SubmitRequestFrom(mcp::Decode<SubmitJobInput>(a), gate.env);
                           launch::Plan plan;
                           if (const base::Status st = launch::BuildPlan(req, &plan); !st.ok()) return "submit_job: " + st.message();
                           rec->plan = plan.ToJson();
                           rec->hash = plan.hash;
                           rec->summary = launch::DescribePlan(plan);
                           *policy = approval::EvaluatePolicy(gate.env.policy, ctx.caller().role, plan);
                           return "";
                         });
      });
}

void RegisterSubmitJob(mcp::Registry& registry, const ProductOptions& options) {
  registry.AddTool(SubmitJobTool(GateOptionsFrom(options)));
}

}  // namespace mt::tools
