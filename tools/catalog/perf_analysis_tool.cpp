#include "tools/catalog/perf_analysis_tool.h"

#include <stdexcept>

#include "mcp/call_context.h"
#include "tools/catalog/answer_budget.h"
#include "tools/gate/run_chain.h"

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
  if (out.contains("goodput") && out["goodput"].is_object()) cap(out["goodput"]["attempts"], 4, "chain attempts beyond 4");
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

PerfReport AnalyzeJobPerf(const std::filesystem::path& workspace, const std::filesystem::path& approvals_dir,
                          const PerfInput& in) {
  PerfReport r = AnalyzePerf(Workspace(workspace).Resolve(in.job), PerfOptionsFrom(in));
  const std::filesystem::path dir = approvals_dir.empty() ? workspace / ".mt" / "approvals" : approvals_dir;
  if (auto g = GoodputOfRun(workspace, dir, r.answer.job.id.empty() ? in.job : r.answer.job.id, in.now.value_or(""))) {
    r.answer.goodput = *g;
    r.structured = mcp::Encode(r.answer);
  }
  return r;
}

std::string BoundPerfAnswer(const PerfInput& in, Json& out) {
  Bound(out, in.detail == "full" ? kFullTokens : kDefaultTokens);
  return PerfText(out);
}

mcp::Tool PerfAnalysisTool(const std::filesystem::path& workspace, const std::filesystem::path& approvals_dir) {
  return mcp::MakeTypedTool<PerfInput, PerfAnswer>(
      {.name = "perf_analysis",
       .title = "Steady-state throughput of a job",
       .description = kDescription,
       // It writes (and rewrites) only its own report file in the job directory.
       .annotations = mcp::ToolAnnotations{false, false, true, false}},
      [workspace, approvals_dir](const PerfInput& in, mcp::CallContext&) {
        return AnalyzeJobPerf(workspace, approvals_dir, in).answer;
      },
      BoundPerfAnswer);
}

void RegisterPerfAnalysis(mcp::Registry& registry, const ProductOptions& options) {
  registry.AddTool(PerfAnalysisTool(options.workspace, options.approvals.approvals_dir));
}

}  // namespace mt::tools
