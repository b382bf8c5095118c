// cancel_job (destructive): cancel a job this workspace's launcher submitted (its job
// directory exists here), behind the same approval gate as submit_job.
#pragma once
#include "mcp/registry.h"
#include "tools/gate/approval_mcp.h"
#include "tools/catalog/product_tools.h"

namespace mt::tools {

mcp::Tool CancelJobTool(const GateOptions& gate);
void RegisterCancelJob(mcp::Registry& registry, const ProductOptions& options);

// The cancel plan for `job` (its job dir must exist in the workspace, with mt's launch
// record): {schema, job, backend, job_dir, workspace}; "" or the reason there is none.
std::string BuildCancelPlan(const std::filesystem::path& workspace, const std::string& job, Json* plan, std::string* hash,
                            std::string* summary);

}  // namespace mt::tools
