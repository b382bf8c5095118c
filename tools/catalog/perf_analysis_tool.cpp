#include "tools/catalog/perf_analysis_tool.h"

#include <stdexcept>

#include "mcp/call_context.h"
#include "tools/catalog/answer_budget.h"

namespace mt::tools {
namespace {

constexpr const char* kDescription =
    "Steady-state throughput of one training job, the numbers a performance engineer trusts: TGS "
    "(tokens/s/device), MFU (from the log, or computed from TFLOP/s/device and the GPU peak table, saying "
    "which peak), TFLOP/s/device and step time over the steady window (warm-up = first 5 logical steps, "
    "configurable; multi-rank logs are counted per logical step), warm-up/steady/tail windows with mean, std, "
    "p50, p99, min, max; jitter; loss trend; throughput phases; periodic overhead such as checkpoint saves "
    "every K steps and what it costs; xplane traces, HLO dumps (collectives by kind, async vs sync) and "
    "TensorBoard files when present. Writes a self-contained HTML report to <job dir>/mt_report/perf.html "
    "(served by `mt serve --http` under /reports/) and links it. Run triage_log first for why a job stopped.";

constexpr size_t kDefaultTokens = 2000;
constexpr size_t kFullTokens = 20000;

void Bound(Json& out, size_t max_tokens) {
  AnswerBudget budget(out, max_tokens);
  if (!budget.over_at_start()) return;
  auto cap = [&budget](Json& a, size_t n, const std::string& what) { budget.Cap(a, n, what); };
  cap(out["phases"], 4, "phases beyond 4");
  cap(out["periodic_overhead"]["spike_steps"], 4, "spike steps beyond 4");
  cap(out["artifacts"]["hlo_dumps"], 1, "HLO dumps beyond the first");
  cap(out["artifacts"]["xplane_profiles"], 2, "xplane profile runs beyond 2");
  cap(out["artifacts"]["tensorboard_event_files"], 2, "event files beyond 2");
  for (auto& p : out["artifacts"]["xplane_profiles"]) cap(p["files"], 2, "xplane file names");
  cap(out["notes"], 3, "notes beyond 3");
  budget.Finish();
}

}  // namespace

PerfOptions PerfOptionsFrom(const PerfInput& in) {
  PerfOptions o;
  o.warmup_steps = static_cast<int>(in.warmup_steps);
  o.gpu = in.gpu.value_or("");
  o.dtype = in.dtype.value_or("");
  o.write_report = in.report;
  o.now = in.now.value_or("");
  return o;
}

std::string BoundPerfAnswer(const PerfInput& in, Json& out) {
  Bound(out, in.detail == "full" ? kFullTokens : kDefaultTokens);
  return PerfText(out);
}

mcp::Tool PerfAnalysisTool(const std::filesystem::path& workspace) {
  return mcp::MakeTypedTool<PerfInput, PerfAnswer>(
      {.name = "perf_analysis",
       .title = "Steady-state throughput of a job",
       .description = kDescription,
       // It writes (and rewrites) only its own report file in the job directory.
       .annotations = mcp::ToolAnnotations{false, false, true, false}},
      [workspace](const PerfInput& in, mcp::CallContext&) {
        return AnalyzePerf(Workspace(workspace).Resolve(in.job), PerfOptionsFrom(in)).answer;
      },
      BoundPerfAnswer);
}

void RegisterPerfAnalysis(mcp::Registry& registry, const ProductOptions& options) {
  registry.AddTool(PerfAnalysisTool(options.workspace));
}

}  // namespace mt::tools
