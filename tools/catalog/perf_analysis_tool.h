// perf_analysis: steady-state throughput, MFU, step time, jitter, loss trend, phases,
// periodic overhead and profiling artifacts of one job, plus an HTML report in the job
// directory. Input and answer are types (PerfInput, PerfAnswer); `mt perf` checks its flags
// against the same schema.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "mcp/typed.h"

#include "mcp/registry.h"
#include "tools/perf/perf_analysis.h"
#include "tools/catalog/product_tools.h"
#include "tools/logs/workspace.h"

namespace mt::tools {

struct PerfInput {
  std::string job;
  int64_t warmup_steps = 5;
  std::optional<std::string> gpu, dtype, now;
  bool report = true;
  std::string detail = "summary";

  template <class F>
  static void Fields(F& f) {
    f("job", &PerfInput::job, {.description = "job id, directory or log name", .min_length = 1, .max_length = 1024});
    f("warmup_steps", &PerfInput::warmup_steps,
      {.description = "logical steps excluded as warm-up", .minimum = 0, .maximum = 100000, .default_value = 5});
    f("gpu", &PerfInput::gpu,
      {.description = "GPU model for MFU (MI355X, MI300X, H100, H200, B200…); default: the one the log names", .max_length = 64});
    f("dtype", &PerfInput::dtype,
      {.description = "data type of the peak used for MFU; default: from the log", .one_of = {"bf16", "fp8"}});
    f("report", &PerfInput::report, {.description = "write <job dir>/mt_report/perf.html", .default_value = true});
    f("now", &PerfInput::now,
      {.description = "ISO-8601 'now' for the triage status (default: the end of the job's TSDB data, else the clock)",
       .max_length = 40});
    f("detail", &PerfInput::detail,
      {.description = "full: up to 20,000 tokens instead of 2,000", .one_of = {"summary", "full"}, .default_value = "summary"});
  }
};

// `approvals_dir`: where restart plans are recorded (empty: <workspace>/.mt/approvals); the
// answer's goodput section reads the chain of a restarted run from there.
mcp::Tool PerfAnalysisTool(const std::filesystem::path& workspace, const std::filesystem::path& approvals_dir = {});
void RegisterPerfAnalysis(mcp::Registry& registry, const ProductOptions& options);

// perf_analysis's answer for an input: AnalyzePerf of the job, and the goodput of the run
// when the job is one attempt of a restarted run.
PerfReport AnalyzeJobPerf(const std::filesystem::path& workspace, const std::filesystem::path& approvals_dir,
                          const PerfInput& input);
// The options an input asks for (the schema already bounded every value).
PerfOptions PerfOptionsFrom(const PerfInput& input);
// Bounds an encoded answer to 2,000 tokens (20,000 with detail: full); returns its text.
std::string BoundPerfAnswer(const PerfInput& input, Json& encoded);

}  // namespace mt::tools
