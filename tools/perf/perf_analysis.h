// perf_analysis's core: throughput numbers a performance engineer can trust, from a job's
// log (and its directory's artifacts). Pure given the files and `now`; no MCP.
//
//  - Steps are logical training steps: a multi-rank `srun -l` log prints each step once per
//    rank; the scanner aggregates them and entries_per_step says how many lines per step.
//  - Windows: warm-up = the first `warmup_steps` logical steps (compilation, caches);
//    tail = the last 10 % of what follows when at least 20 steps follow (at least one
//    step); steady = everything between. Steady-state TGS is the steady window's mean.
//  - MFU: the log's own when it prints one, else TFLOP/s/device over the GPU peak table
//    (configs/gpu_peaks.yaml) for the GPU and data type the log names or the caller gives.
//  - Periodic overhead: step-time spikes (more than 6 robust σ and 10 % above the median)
//    whose spacing repeats (checkpoint saves every K steps), with their cost in percent.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "mcp/json.h"
#include "tools/logs/log_scanner.h"
#include "tools/perf/perf_answer.h"
#include "tools/common/stats.h"
#include "tools/logs/workspace.h"

namespace mt::tools {

struct PerfOptions {
  int warmup_steps = 5;
  std::string gpu;                      // overrides the GPU the log names ("MI355X")
  std::string dtype;                    // overrides the data type (bf16 | fp8)
  std::filesystem::path peaks_file;     // empty: LoadGpuPeaks() search
  std::string now;                      // ISO-8601 for the triage status; empty: the clock
  bool write_report = true;             // <job dir>/mt_report/perf.html
  std::string report_url_prefix = "/reports";
};

struct StepWindow {
  std::string name;                     // warmup | steady | tail
  int64_t first_step = -1, last_step = -1;
  StatSummary tgs, step_seconds, tflops, mfu;
};

struct SteadyTgs {
  bool ok = false;                      // false: no step with Tokens/s/device after warm-up
  double mean = 0, std = 0, p50 = 0;    // tokens/s/device over the steady window
  size_t steps = 0;
  int64_t first_step = -1, last_step = -1;
  int warmup_steps = 0;
  double entries_per_step = 0;
  double step_seconds_mean = 0;
};

// The three windows of a scan's logical steps.
std::vector<StepWindow> SplitWindows(const LogScan& scan, int warmup_steps);
SteadyTgs SteadyTgsOfScan(const LogScan& scan, int warmup_steps = 5);
// Scans (through the process-wide ScanCache) and measures one log file. Throws
// std::runtime_error when the file cannot be read. What `mt sweep` uses per run.
SteadyTgs SteadyTgsOfLog(const std::filesystem::path& log, int warmup_steps = 5);

struct PeriodicOverhead {
  bool detected = false;
  std::vector<int64_t> spike_steps;
  std::optional<int64_t> period_steps;
  double median_seconds = 0;
  double extra_seconds_per_spike = 0;
  double overhead_pct = 0;              // extra seconds / all post-warm-up seconds
  size_t at_checkpoints = 0;            // spikes within one step of a "Saved a checkpoint"
};
PeriodicOverhead FindPeriodicOverhead(const LogScan& scan, int warmup_steps);

struct PerfReport {
  PerfAnswer answer;                    // perf_analysis's answer
  Json structured;                      // its encoding (structuredContent before the budget)
  SteadyTgs steady;
  std::vector<StepWindow> windows;
  PeriodicOverhead overhead;
  std::optional<double> mfu_pct;        // steady mean (logged or computed)
  std::filesystem::path report_file;    // written HTML, empty when none
};

// Throws std::runtime_error when the job has no readable log, std::invalid_argument for
// bad options.
PerfReport AnalyzePerf(const JobFiles& job, const PerfOptions& options);

// The `now` triage is judged at when the caller gives none: the end of the job's TSDB data
// when it has one (so a job that was running when its data ends reads as running, the same
// answer every time), else "" (the clock).
std::string DefaultJudgeTime(const JobFiles& job);

// Human text for the tool's content and `mt perf`.
std::string PerfText(const Json& structured);

}  // namespace mt::tools
