#include "tools/catalog/compare_jobs_tool.h"

#include <stdexcept>

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

Json OutputSchema() {
  Json num_or_null = {{"type", {"number", "null"}}};
  Json metric = {{"type", "object"},
                 {"required", {"metric", "a", "b", "delta", "delta_pct", "hosts_consistent", "significant"}},
                 {"properties", {{"metric", {{"type", "string"}}}, {"a", {{"type", "number"}}}, {"b", {{"type", "number"}}},
                                 {"delta", {{"type", "number"}}}, {"delta_pct", {{"type", "number"}}},
                                 {"hosts_consistent", {{"type", "boolean"}}}, {"significant", {{"type", "boolean"}}},
                                 {"hosts", {{"type", "array"}}}}}};
  return Json{{"type", "object"},
              {"required", {"a", "b", "jobs", "tgs", "config_diff", "metrics", "log_diff", "tsdb", "verdict", "notes", "truncated"}},
              {"properties",
               {{"a", {{"type", "string"}}},
                {"b", {{"type", "string"}}},
                {"jobs", {{"type", "array"}}},
                {"tgs", {{"type", "object"}, {"required", {"a", "b", "delta_pct"}},
                         {"properties", {{"a", num_or_null}, {"b", num_or_null}, {"delta_pct", num_or_null}}}}},
                {"config_diff", {{"type", "array"}, {"items", {{"type", "object"}, {"required", {"key", "kind", "a", "b"}}}}}},
                {"metrics", {{"type", "array"}, {"items", metric}}},
                {"metrics_significant", {{"type", "integer"}}},
                {"log_diff", {{"type", "array"}, {"items", {{"type", "object"}, {"required", {"item", "a", "b", "note"}}}}}},
                {"tsdb", {{"type", "object"}, {"required", {"used"}}}},
                {"verdict", {{"type", "string"}}},
                {"notes", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                {"more", {{"type", "array"}}},
                {"truncated", {{"type", "boolean"}}},
                {"omitted", {{"type", "string"}}},
                // The pair's diagnosis (tools/compare/pair_diagnosis.h).
                {"significant", {{"type", "boolean"}}},
                {"family", {{"type", "string"}}},
                {"uniform", {{"type", "boolean"}}},
                {"culprits", {{"type", "array"}, {"items", {{"type", "object"}, {"required", {"host", "family", "job_side", "metric"}}}}}},
                {"why", {{"type", "string"}}}}}};
}

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

Json CompareJobsStructured(const std::filesystem::path& workspace, const CompareJobsInput& in, TsdbManager& manager,
                           mcp::CallContext* call) {
  Workspace ws(workspace);
  std::vector<JobFiles> jobs;
  for (const auto& j : in.jobs) jobs.push_back(ws.Resolve(j));
  CompareOptions o;
  o.warmup_steps = static_cast<int>(in.warmup_steps);
  o.use_tsdb = in.tsdb;
  o.now = in.now.value_or("");
  const bool full = in.detail == "full";
  o.max_metrics = full ? 60 : 10;
  Json out = CompareJobs(ws, jobs, o, &manager, call);
  Bound(out, full ? kFullTokens : kDefaultTokens);
  return out;
}

mcp::Tool CompareJobsTool(const std::filesystem::path& workspace, TsdbManager& manager) {
  mcp::Tool t;
  t.name = "compare_jobs";
  t.title = "Compare jobs: why is B slower than A";
  t.description = kDescription;
  t.input_schema = mcp::SchemaOf<CompareJobsInput>();
  t.output_schema = OutputSchema();
  t.annotations = mcp::ToolAnnotations::ReadOnly();
  // A cold call starts Prometheus on private TSDB copies (seconds to minutes): clients that
  // negotiated the Tasks extension get a task to poll instead of a request that may time out.
  t.task_support = mcp::TaskSupport::kOptional;
  TsdbManager* m = &manager;
  t.handler = [workspace, m](const Json& args, mcp::CallContext& ctx) -> mcp::ToolResult {
    try {
      Json out = CompareJobsStructured(workspace, mcp::Decode<CompareJobsInput>(args), *m, &ctx);
      std::string text = CompareText(out);
      return mcp::ToolResult::Structured(std::move(out), std::move(text));
    } catch (const std::exception& e) {
      return mcp::ToolResult::Error(std::string("compare_jobs: ") + e.what());
    }
  };
  return t;
}

void RegisterCompareJobs(mcp::Registry& registry, const ProductOptions& options) {
  registry.AddTool(CompareJobsTool(options.workspace, DefaultTsdbManager()));
}

}  // namespace mt::tools
