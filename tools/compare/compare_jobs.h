// compare_jobs' core: why is B slower (or faster) than A. The procedure of reference
// §4.2 "multi-job comparison": triage every job; diff the configurations; align by
// training step and keep only the overlapping steady range; compare steady means and
// variances (spikes such as checkpoint saves excluded); sweep both TSDBs for contention
// (compare_tsdb.h); count the log events that differ (RCCL communicator-initialisation
// waves, checkpoint restores and saves, step stalls outside checkpoints).
// With more than two jobs, the first is the baseline and each other job is compared to it.
#pragma once
#include <string>
#include <vector>

#include "mcp/json.h"
#include "tools/compare/compare_answer.h"
#include "tools/logs/log_scanner.h"
#include "tools/tsdb/metrics_source.h"
#include "tools/tsdb/tsdb_manager.h"
#include "tools/logs/workspace.h"

namespace mt::mcp {
class CallContext;
}

namespace mt::tools {

struct CompareOptions {
  int warmup_steps = 5;
  bool use_tsdb = true;      // false: logs only
  std::string now;           // ISO-8601 for triage; empty: the clock
  size_t max_metrics = 10;   // metrics[] rows in the answer (significant ones first)
  const MetricsSource* source = nullptr;   // both jobs' metrics from this shared store, not their TSDBs
};

struct TgsComparison {
  bool ok = false;               // both jobs have steady steps in the overlap
  double a = 0, b = 0;           // steady means, spikes excluded
  double a_std = 0, b_std = 0;
  size_t a_n = 0, b_n = 0, a_spikes = 0, b_spikes = 0;
  double delta_pct = 0;          // (b - a) / a * 100
  double t = 0;                  // Welch t of the per-step values
  bool significant = false;      // |t| ≥ 5 and |delta| ≥ 0.5 %
  int64_t first_step = -1, last_step = -1;   // the overlapping steady range
};

// Steps [first, last] of both logs' steady parts; TGS of A and B over it.

TgsComparison CompareTgs(const LogScan& a, const LogScan& b, int warmup_steps);

// Throws WorkspaceError / std::invalid_argument for bad jobs or arguments and
// std::runtime_error when a job has no readable log. `manager` may be null (logs only).
CompareAnswer CompareJobs(const Workspace& workspace, const std::vector<JobFiles>& jobs, const CompareOptions& options,
                          TsdbManager* manager, mcp::CallContext* call);

// Human text for the tool's content and `mt compare`, from the (possibly budget-trimmed)
// encoded answer.
std::string CompareText(const Json& structured);

}  // namespace mt::tools
