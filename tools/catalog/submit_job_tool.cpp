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

launch::PlanRequest SubmitRequestFromArgs(const Json& args, const ApprovalEnv& env) {
  launch::PlanRequest req;
  req.model_spec = args.value("model", "");
  req.backend = args.value("backend", "slurm");
  req.nodes = args.value("nodes", 1);
  for (const char* opt : {"partition", "time", "nodelist", "exclude"})
    if (args.contains(opt)) req.scheduler_args.push_back(std::string("--") + opt + "=" + args[opt].get<std::string>());
  if (args.contains("passthrough")) req.passthrough = args["passthrough"].get<std::vector<std::string>>();
  req.observe = args.value("observe", false);
  req.workspace = env.workspace;
  req.models_dir = env.models_dir.empty() ? launch::DefaultModelsDir() : env.models_dir;
  req.repo_dir = std::filesystem::absolute(req.models_dir).parent_path().parent_path();
  if (const char* v = std::getenv("MT_SLURM_PACK_TASKS"); v && std::string(v) == "1") req.pack_tasks = true;
  launch::ResolveBinaries(&req);
  return req;
}

mcp::Tool SubmitJobTool(const GateOptions& gate) {
  mcp::Tool t;
  t.name = "submit_job";
  t.title = "Submit a training job (human approval required)";
  t.description = kDescription;
  Json sched = {{"type", "string"}, {"minLength", 1}, {"maxLength", 256}, {"pattern", "^[A-Za-z0-9_.,:\\[\\]-]+$"}};
  Json exclude = sched;
  exclude["description"] = "nodes to keep the job off (e.g. a bad node triage found)";
  t.input_schema = Json{
      {"type", "object"},
      {"additionalProperties", false},
      {"properties",
       {{"model", {{"type", "string"}, {"minLength", 1}, {"maxLength", 256}, {"description", "model[[:alias]:tag], a config in configs/models"}}},
        {"nodes", {{"type", "integer"}, {"minimum", 1}, {"maximum", 4096}, {"default", 1}}},
        {"backend", {{"enum", {"slurm", "local", "k8s"}}, {"default", "slurm"}}},
        {"partition", sched},
        {"time", sched},
        {"nodelist", sched},
        {"exclude", exclude},
        {"passthrough", {{"type", "array"}, {"maxItems", 64}, {"items", {{"type", "string"}, {"maxLength", 4096}}},
                         {"description", "key=value overrides for the training run (e.g. steps=50), _env_KEY=VALUE"}}},
        {"observe", {{"type", "boolean"}, {"default", false}, {"description", "run mt-exporter + Prometheus with the job"}}},
        {"plan_id", {{"type", "string"}, {"maxLength", 256}, {"description", "look up an earlier plan's state instead of planning"}}}}}};
  t.output_schema = RecordViewSchema();
  t.annotations = mcp::ToolAnnotations{false, false, false, true};
  t.handler = [gate](const Json& args, mcp::CallContext& ctx) -> mcp::ToolResult {
    if (!args.contains("plan_id") && !args.contains("model"))
      return mcp::ToolResult::Error("submit_job: `model` is required (or `plan_id` to look up a plan)");
    return GatedCall(gate, "submit", args, ctx,
                     [&gate, &ctx](const Json& a, approval::PlanRecord* rec, approval::PolicyDecision* policy) -> std::string {
                       launch::PlanRequest req = SubmitRequestFromArgs(a, gate.env);
                       launch::Plan plan;
                       if (auto e = launch::BuildPlan(req, &plan); !e.empty()) return "submit_job: " + e;
                       rec->plan = plan.ToJson();
                       rec->hash = plan.hash;
                       rec->summary = launch::DescribePlan(plan);
                       *policy = approval::EvaluatePolicy(gate.env.policy, ctx.caller().role, plan);
                       return "";
                     });
  };
  return t;
}

void RegisterSubmitJob(mcp::Registry& registry, const ProductOptions& options) {
  registry.AddTool(SubmitJobTool(GateOptionsFrom(options)));
}

}  // namespace mt::tools
