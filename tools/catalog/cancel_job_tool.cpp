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
  if (const base::Status st = launch::JobStatus(workspace, job, &status); !st.ok()) return st.message();
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
  return mcp::MakeTypedTool<CancelJobInput, PlanView>(
      {.name = "cancel_job",
       .title = "Cancel a job (human approval required)",
       .description = kDescription,
       .annotations = mcp::ToolAnnotations{false, true, false, true}},
      [gate](const CancelJobInput& in, mcp::CallContext& ctx) -> mcp::ToolResult {
        if (!in.plan_id && !in.job)
          return mcp::ToolResult::Error("cancel_job: `job` is required (or `plan_id` to look up a plan)");
        return GatedCall(gate, "cancel", mcp::Encode(in), ctx,
                         [&gate, &ctx](const Json& a, approval::PlanRecord* rec, approval::PolicyDecision* policy) -> std::string {
                           if (auto e = BuildCancelPlan(gate.env.workspace, a["job"].get<std::string>(), &rec->plan,
                                                        &rec->hash, &rec->summary);
                               !e.empty())
                             return "cancel_job: " + e;
                           *policy = approval::EvaluateCancelPolicy(gate.env.policy, ctx.caller().role);
                           return "";
                         });
      });
}

void RegisterCancelJob(mcp::Registry& registry, const ProductOptions& options) {
  registry.AddTool(CancelJobTool(GateOptionsFrom(options)));
}

}  // namespace mt::tools
