#include "tools/catalog/product_tools.h"

#include "tools/catalog/compare_jobs_tool.h"
#include "tools/catalog/list_jobs_tool.h"
#include "tools/catalog/perf_analysis_tool.h"
#include "tools/catalog/cancel_job_tool.h"
#include "tools/catalog/query_tsdb_tool.h"
#include "tools/catalog/read_log_tool.h"
#include "tools/catalog/run_sweep_tool.h"
#include "tools/catalog/watch_job_tool.h"
#include "tools/catalog/skills.h"
#include "tools/catalog/submit_job_tool.h"
#include "tools/catalog/triage_log_tool.h"

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
  RegisterRunSweep(registry, options);
  RegisterWatchJob(registry, options);
  RegisterSkills(registry, BuiltinSkills(), options.workspace);
}

}  // namespace mt::tools
