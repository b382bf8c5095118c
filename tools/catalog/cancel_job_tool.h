// cancel_job (destructive): cancel a job this workspace's launcher submitted (its job
// directory exists here), behind the same approval gate as submit_job.
#pragma once
#include <optional>
#include <string>

#include "mcp/registry.h"
#include "mcp/typed.h"
#include "tools/gate/approval_mcp.h"
#include "tools/catalog/product_tools.h"

namespace mt::tools {

struct CancelJobInput {
  std::optional<std::string> job;
  std::optional<std::string> plan_id;

  template <class F>
  static void Fields(F& f) {
    f("job", &CancelJobInput::job, {.description = "job id or job directory name", .min_length = 1, .max_length = 1024});
    f("plan_id", &CancelJobInput::plan_id, {.description = "look up an earlier cancel plan's state", .max_length = 256});
  }
};

mcp::Tool CancelJobTool(const GateOptions& gate);
void RegisterCancelJob(mcp::Registry& registry, const ProductOptions& options);

// The cancel plan for `job` (its job dir must exist in the workspace, with mt's launch
// record): {schema, job, backend, job_dir, workspace}; "" or the reason there is none.
std::string BuildCancelPlan(const std::filesystem::path& workspace, const std::string& job, Json* plan, std::string* hash,
                            std::string* summary);

}  // namespace mt::tools
