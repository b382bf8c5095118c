#include "tools/product_tools.h"

#include "tools/compare_jobs_tool.h"
#include "tools/list_jobs_tool.h"
#include "tools/perf_analysis_tool.h"
#include "tools/cancel_job_tool.h"
#include "tools/query_tsdb_tool.h"
#include "tools/read_log_tool.h"
#include "tools/skills.h"
#include "tools/submit_job_tool.h"
#include "tools/triage_log_tool.h"

namespace mt::tools {

void RegisterProductTools(mcp::Registry& registry, const ProductOptions& options) {
  // Each tool file exposes Register<Tool>(registry, options); list them here.
  RegisterListJobs(registry, options);
  RegisterTriageLog(registry, options);
  RegisterReadLog(registry, options);
  RegisterQueryTsdb(registry, options);
  RegisterPerfAnalysis(registry, options);
  RegisterCompareJobs(registry, options);
  RegisterSubmitJob(registry, options);
  RegisterCancelJob(registry, options);
  RegisterSkills(registry, BuiltinSkills(), options.workspace);
}

}  // namespace mt::tools
