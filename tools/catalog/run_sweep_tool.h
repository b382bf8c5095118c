// run_sweep: a CI regression sweep over MCP (what `mt sweep` runs): every model and node
// count of a sweep the server has in configs/sweeps, submitted under the CI policy, waited
// for and measured (steady TGS), compared with no baseline. Long-running: it runs as an MCP
// task where the client negotiated the Tasks extension (progress in the task's status,
// the result fetched after completion), and cancelling it cancels every job it submitted.
//
// Only callers with role `ci` may run it: the CI policy approves each plan server-side, so
// a sweep from any other caller would be jobs submitted without a human approving them. An
// agent proposes a single job with submit_job instead.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "mcp/registry.h"
#include "mcp/typed.h"
#include "tools/catalog/product_tools.h"

namespace mt::tools {

struct RunSweepInput {
  std::string sweep;
  std::optional<double> threshold_pct;
  template <class F> static void Fields(F& f) {
    f("sweep", &RunSweepInput::sweep,
      {.description = "a sweep of the server's configs/sweeps (file name without .yaml, e.g. ci-smoke)",
       .min_length = 1, .max_length = 128, .pattern = "^[A-Za-z0-9][A-Za-z0-9_-]*$"});
    f("threshold_pct", &RunSweepInput::threshold_pct,
      {.description = "steady-TGS drop that counts as a regression (default: the sweep's own)", .minimum = 0.1,
       .maximum = 99});
  }
};

struct SweepRunAnswer {
  std::string model;
  int64_t nodes = 1;
  std::string status;
  std::optional<std::string> job_id;
  std::optional<double> tgs, tgs_std;
  std::optional<int64_t> steps;
  std::string verdict;
  std::optional<std::string> detail;
  template <class F> static void Fields(F& f) {
    f("model", &SweepRunAnswer::model);
    f("nodes", &SweepRunAnswer::nodes);
    f("status", &SweepRunAnswer::status, {.one_of = {"ok", "failed", "timeout", "error", "cancelled"}});
    f("job_id", &SweepRunAnswer::job_id);
    f("tgs", &SweepRunAnswer::tgs, {.description = "steady-state tokens/s/device"});
    f("tgs_std", &SweepRunAnswer::tgs_std);
    f("steps", &SweepRunAnswer::steps, {.description = "steps in the steady window"});
    f("verdict", &SweepRunAnswer::verdict,
      {.description = "against the baseline: new (none), ok, regression, improved, new_failure, still_failing, fixed, error"});
    f("detail", &SweepRunAnswer::detail, {.description = "why it failed, or where its log is"});
  }
};

struct RunSweepAnswer {
  std::string sweep, status;
  double seconds = 0;
  std::vector<SweepRunAnswer> runs;
  std::string markdown;
  template <class F> static void Fields(F& f) {
    f("sweep", &RunSweepAnswer::sweep);
    f("status", &RunSweepAnswer::status,
      {.description = "passed, failed (a regression, a new failure or a run not measured) or cancelled",
       .one_of = {"passed", "failed", "cancelled"}});
    f("seconds", &RunSweepAnswer::seconds);
    f("runs", &RunSweepAnswer::runs);
    f("markdown", &RunSweepAnswer::markdown, {.description = "the report CI posts"});
  }
};

void RegisterRunSweep(mcp::Registry& registry, const ProductOptions& options);

}  // namespace mt::tools
