// submit_job: an agent proposes a training job; the server builds the launcher plan (exact
// command line, resources, hash) and nothing reaches the cluster until a human approves
// that plan (in-band elicitation or `mt approve`) or the CI policy allows it.
#pragma once
#include "mcp/registry.h"
#include "tools/gate/approval_mcp.h"
#include "tools/catalog/product_tools.h"

namespace mt::tools {

mcp::Tool SubmitJobTool(const GateOptions& gate);
void RegisterSubmitJob(mcp::Registry& registry, const ProductOptions& options);

// The launcher request the tool's arguments describe (scheduler options become sbatch
// arguments; MT_SLURM_PACK_TASKS=1 packs the tasks on one node, as `mt submit` does).
launch::PlanRequest SubmitRequestFromArgs(const Json& args, const ApprovalEnv& env);

// The gate options a ProductOptions implies (approvals under the workspace by default).
GateOptions GateOptionsFrom(const ProductOptions& options);

}  // namespace mt::tools
