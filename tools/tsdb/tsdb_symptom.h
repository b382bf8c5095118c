// The symptom a diagnosis must explain, in wall time: when the job's throughput left its
// early steady state (slow segments), and whether progress stopped while the job's GPUs
// stayed busy (a stop). Host attribution (tsdb_attribution.h) blames only what lines up
// with these times: a host that was noisy before the slowdown and stayed so is a decoy.
//
// Sources, best first: triage's TGS phases (every step of the log, change-point
// segmentation in tools/common/tgs_phases.h) mapped to time through the TSDB's tb_step;
// else the TSDB's own tb_perf_per_device_tokens_per_sec samples, segmented the same way.
// The stop comes from the TSDB alone: the last time tb_step moved, and what the GPUs did
// after it (busy-waiting in a collective, or idle because the job ended).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mcp/json.h"
#include "tools/tsdb/query_answer.h"
#include "tools/tsdb/tsdb_context.h"

namespace mt::tools {

struct SlowSegment {
  int64_t step0 = 0, step1 = 0;   // inclusive
  double t0 = 0, t1 = 0;          // wall time of the steps
  double change_pct = 0;          // TGS against the early steady state (negative: slower)
};

struct Symptom {
  std::string kind = "unknown";   // none | slowdown | stop | unknown (no throughput data)
  std::string source;             // log | tsdb | "" (no step series)
  double baseline_tgs = 0;        // the early steady state
  std::vector<SlowSegment> slow;  // steps slower than the baseline by more than the noise
                                  // (adjacent slow phases merged: one slide, one segment)
  std::vector<SlowSegment> phases;  // the slow phases unmerged: hosts that take turns
                                    // inside one slow stretch show in their own phase
  std::string pattern;            // the TGS pattern (constant_drop, phased, gradual, ...)
  double train_t0 = 0;            // first step's time (startup excluded from baselines)
  std::optional<double> progress_end;   // the last time tb_step moved
  bool stopped = false;                 // progress stopped while most GPUs stayed busy
  std::map<std::string, double> util_after;   // host → mean GPU utilization in the 15 min after
  double busy_share_after = 0;          // share of reporting hosts busy after progress_end
  double scrape_s = 30;                 // the exporters' scrape interval (from `up`)
  std::string why;                      // one sentence for the answer
};

Symptom ReadSymptom(TsdbContext& tsdb, const Json& triage);

// Healthy training time (outside every slow segment, after startup, before the stop) and
// slow time, as the range of one slow segment with `margin` seconds cut at both edges.
bool InHealthy(const Symptom& s, double t, double margin);

SymptomAnswer FromSymptom(const Symptom& s);

}  // namespace mt::tools
