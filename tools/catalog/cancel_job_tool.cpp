#include "tools/catalog/cancel_job_tool.h"

#include "base/sha256.h"
#include "launcher/launch/submit.h"
#include "tools/catalog/submit_job_tool.h"

namespace mt::tools {
namespace approval = launch::approval;

namespace {

constexpr const char* kDescription =
    "Cancel a job that mt submitted from this workspace (its job directory must exist here). Like "
    "submit_job it needs a human's approval (a form in your client, or `mt approve <plan_id>` on the "
    "host); the result says what the scheduler did. Call again with only `plan_id` for the state.";

}  // namespace

std::string BuildCancelPlan(const std::filesystem::path& workspace, const std::string& job, Json* plan, std::string* hash,
                            std::string* summary) {
  if (job.empty() || job.find('/') != std::string::npos || job == "." || job == "..")
    return "job '" + job + "' must be a job id or job directory name in the workspace";
  Json status;
  if (auto e = launch::JobStatus(workspace, job, &status); !e.empty()) return e;
  *plan = Json{{"schema", "mt.cancel/1"},
               {"job", status.value("id", job)},
               {"backend", status.value("backend", "")},
               {"job_dir", status.value("job_dir", "")},
               {"workspace", workspace.string()}};
  *hash = base::Sha256Hex(plan->dump());
  *summary = "Cancel job " + (*plan)["job"].get<std::string>() + " (" + (*plan)["backend"].get<std::string>() +
             ", now " + status.value("state", "?") + ")\n  job dir: " + (*plan)["job_dir"].get<std::string>() + "\n";
  return "";
}

mcp::Tool CancelJobTool(const GateOptions& gate) {
  mcp::Tool t;
  t.name = "cancel_job";
  t.title = "Cancel a job (human approval required)";
  t.description = kDescription;
  t.input_schema = Json{
      {"type", "object"},
      {"additionalProperties", false},
      {"properties",
       {{"job", {{"type", "string"}, {"minLength", 1}, {"maxLength", 1024}, {"description", "job id or job directory name"}}},
        {"plan_id", {{"type", "string"}, {"maxLength", 256}, {"description", "look up an earlier cancel plan's state"}}}}}};
  t.output_schema = RecordViewSchema();
  t.annotations = mcp::ToolAnnotations{false, true, false, true};
  t.handler = [gate](const Json& args, mcp::CallContext& ctx) -> mcp::ToolResult {
    if (!args.contains("plan_id") && !args.contains("job"))
      return mcp::ToolResult::Error("cancel_job: `job` is required (or `plan_id` to look up a plan)");
    return GatedCall(gate, "cancel", args, ctx,
                     [&gate, &ctx](const Json& a, approval::PlanRecord* rec, approval::PolicyDecision* policy) -> std::string {
                       if (auto e = BuildCancelPlan(gate.env.workspace, a["job"].get<std::string>(), &rec->plan, &rec->hash,
                                                    &rec->summary);
                           !e.empty())
                         return "cancel_job: " + e;
                       *policy = approval::EvaluateCancelPolicy(gate.env.policy, ctx.caller().role);
                       return "";
                     });
  };
  return t;
}

void RegisterCancelJob(mcp::Registry& registry, const ProductOptions& options) {
  registry.AddTool(CancelJobTool(GateOptionsFrom(options)));
}

}  // namespace mt::tools
