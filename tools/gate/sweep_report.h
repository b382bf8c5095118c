// A sweep's results, their comparison against a baseline (a file from an earlier sweep or
// the other code state of this one), and the reports CI reads: a markdown table and JUnit
// XML. Pure: no files, no clock.
//
// Verdicts per (model, nodes): ok | regression (steady TGS dropped by more than the
// threshold) | improved | new_failure (ran before, fails now) | still_failing | new (no
// baseline) | error (timed out or could not be measured). A sweep fails on any regression,
// new_failure or error.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "mcp/json.h"

namespace mt::tools {

struct SweepResult {
  std::string state;        // code state label ("base", "head", or "baseline" from a file)
  std::string model;
  int nodes = 1;
  std::string status;       // ok | failed | timeout | error | cancelled
  std::string job_id;
  double tgs = 0;           // steady-state mean tokens/s/device (status ok)
  double tgs_std = 0;
  size_t steps = 0;         // steps in the steady window
  std::string detail;       // why it failed, or where its log is
};

struct SweepRow {
  std::string model;
  int nodes = 1;
  std::optional<SweepResult> baseline;
  SweepResult current;
  std::optional<double> delta_pct;
  std::string verdict;
};

struct SweepComparison {
  std::string baseline_label, current_label;
  double threshold_pct = 5;
  std::vector<SweepRow> rows;
  int regressions = 0, new_failures = 0, errors = 0;
  bool failed() const { return regressions > 0 || new_failures > 0 || errors > 0; }
};

SweepComparison CompareSweep(const std::vector<SweepResult>& baseline, const std::vector<SweepResult>& current,
                             double threshold_pct);

std::string SweepMarkdown(const SweepComparison& c, const std::string& sweep_name);
std::string SweepJUnit(const SweepComparison& c, const std::string& sweep_name, double seconds);

// The baseline file: {"sweep": name, "results": [{model, nodes, status, tgs, tgs_std, steps, job_id}]}.
Json SweepResultsToJson(const std::vector<SweepResult>& results, const std::string& sweep_name);
// Throws std::runtime_error starting with `where` on a malformed file.
std::vector<SweepResult> SweepResultsFromJson(const Json& j, const std::string& where);

}  // namespace mt::tools
