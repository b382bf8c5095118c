#include "tools/catalog/compare_jobs_tool.h"

#include "mcp/call_context.h"
#include "tools/catalog/answer_budget.h"

namespace mt::tools {
namespace {

constexpr const char* kDescription =
    "Why is job B slower (or faster) than job A, in one call. Triages every job first (and says so when a "
    "failed job's throughput is involved); diffs the configurations (passthrough args, _env_ variables, node "
    "count and hosts, MaxText config params, model, artifact/git); aligns the jobs by training step and "
    "compares steady-state TGS over the overlapping steps only (warm-up and spikes such as checkpoint saves "
    "excluded); sweeps both jobs' Prometheus TSDBs (every hw_*, ray_node_* and tb_* metric, per host) and "
    "ranks what differs by effect size with per-host consistency (a uniform shift on every host vs a few "
    "hosts that stand out); counts log events that differ (RCCL/NCCL communicator-initialisation waves, "
    "checkpoint restores and saves, stalls). Without a TSDB it compares the logs and says so. More than two "
    "jobs: the first is the baseline for each other one.";

constexpr size_t kDefaultTokens = 2000;
constexpr size_t kFullTokens = 20000;

void Bound(Json& out, size_t max_tokens) {
  AnswerBudget budget(out, max_tokens);
  if (!budget.over_at_start()) return;
  auto cap = [&budget](Json& a, size_t n, const std::string& what) { budget.Cap(a, n, what); };
  if (out.contains("more"))
    for (auto& m : out["more"]) cap(m["config_diff"], 3, "config rows of further jobs beyond 3");
  cap(out["config_diff"], 12, "config differences beyond 12");
  cap(out["metrics"], 6, "metrics beyond 6");
  cap(out["log_diff"], 6, "log differences beyond 6");
  cap(out["config_diff"], 6, "config differences beyond 6");
  if (out.contains("more")) cap(out["more"], 2, "comparisons beyond the fourth job");
  cap(out["metrics"], 3, "metrics beyond 3");
  budget.Finish();
}

}  // namespace

CompareAnswer CompareFor(const std::filesystem::path& workspace, const CompareJobsInput& in, TsdbManager& manager,
                         const std::vector<MetricsSource>& sources, mcp::CallContext* call) {
  Workspace ws(workspace);
  std::vector<JobFiles> jobs;
  for (const auto& j : in.jobs) jobs.push_back(ws.Resolve(j));
  CompareOptions o;
  o.warmup_steps = static_cast<int>(in.warmup_steps);
  o.use_tsdb = in.tsdb;
  o.now = in.now.value_or("");
  o.max_metrics = in.detail == "full" ? 60 : 10;
  if (in.source) o.source = &FindMetricsSource(sources, *in.source);
  return CompareJobs(ws, jobs, o, &manager, call);
}

std::string BoundCompareAnswer(const CompareJobsInput& in, Json& out) {
  Bound(out, in.detail == "full" ? kFullTokens : kDefaultTokens);
  return CompareText(out);
}

Json CompareJobsStructured(const std::filesystem::path& workspace, const CompareJobsInput& in, TsdbManager& manager,
                           const std::vector<MetricsSource>& sources, mcp::CallContext* call) {
  Json out = mcp::Encode(CompareFor(workspace, in, manager, sources, call));
  BoundCompareAnswer(in, out);
  return out;
}

mcp::Tool CompareJobsTool(const std::filesystem::path& workspace, TsdbManager& manager, std::vector<MetricsSource> sources) {
  TsdbManager* m = &manager;
  return mcp::MakeTypedTool<CompareJobsInput, CompareAnswer>(
      {.name = "compare_jobs",
       .title = "Compare jobs: why is B slower than A",
       .description = kDescription,
       .annotations = mcp::ToolAnnotations::ReadOnly(),
       // A cold call starts Prometheus on private TSDB copies (seconds to minutes): clients
       // that negotiated the Tasks extension get a task to poll instead of a request that
       // may time out.
       .task_support = mcp::TaskSupport::kOptional},
      [workspace, m, sources = std::move(sources)](const CompareJobsInput& in, mcp::CallContext& ctx) {
        return CompareFor(workspace, in, *m, sources, &ctx);
      },
      BoundCompareAnswer);
}

void RegisterCompareJobs(mcp::Registry& registry, const ProductOptions& options) {
  registry.AddTool(CompareJobsTool(options.workspace, DefaultTsdbManager(), options.metrics_sources));
}

}  // namespace mt::tools
