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

Json InputSchema() {
  return Json{{"type", "object"},
              {"additionalProperties", false},
              {"required", {"job"}},
              {"properties",
               {{"job", {{"type", "string"}, {"minLength", 1}, {"maxLength", 1024}, {"description", "job id, directory or log name"}}},
                {"warmup_steps", {{"type", "integer"}, {"minimum", 0}, {"maximum", 100000}, {"default", 5}, {"description", "logical steps excluded as warm-up"}}},
                {"gpu", {{"type", "string"}, {"maxLength", 64}, {"description", "GPU model for MFU (MI355X, MI300X, H100, H200, B200…); default: the one the log names"}}},
                {"dtype", {{"enum", {"bf16", "fp8"}}, {"description", "data type of the peak used for MFU; default: from the log"}}},
                {"report", {{"type", "boolean"}, {"default", true}, {"description", "write <job dir>/mt_report/perf.html"}}},
                {"now", {{"type", "string"}, {"maxLength", 40}, {"description", "ISO-8601 'now' for the triage status (default: the end of the job's TSDB data, else the clock)"}}},
                {"detail", {{"enum", {"summary", "full"}}, {"default", "summary"}, {"description", "full: up to 20,000 tokens instead of 2,000"}}}}}};
}

Json Nullable(const char* type) { return Json{{"type", {type, "null"}}}; }

Json OutputSchema() {
  return Json{{"type", "object"},
              {"required", {"job", "status", "class", "steps", "steady", "mfu", "windows", "jitter", "loss", "tgs_pattern", "phases",
                            "periodic_overhead", "artifacts", "report", "notes", "verdict", "truncated"}},
              {"properties",
               {{"job", {{"type", "object"}, {"required", {"id", "name", "log"}}}},
                {"status", {{"type", "string"}}},
                {"class", {{"type", "string"}}},
                {"steps", {{"type", "object"}, {"required", {"first", "last", "logical", "entries_per_step", "warmup_steps"}}}},
                {"steady", {{"type", "object"},
                            {"required", {"tgs", "tgs_std", "step_seconds", "tflops_per_device", "mfu_pct", "first_step", "last_step"}},
                            {"properties", {{"tgs", Nullable("number")}, {"mfu_pct", Nullable("number")}, {"step_seconds", Nullable("number")},
                                            {"tflops_per_device", Nullable("number")}}}}},
                {"mfu", {{"type", "object"}, {"required", {"source", "gpu", "dtype", "peak_tflops", "peak_source"}}}},
                {"windows", {{"type", "array"}, {"items", {{"type", "object"}, {"required", {"name", "first_step", "last_step", "tgs", "step_seconds"}}}}}},
                {"jitter", {{"type", "object"}}},
                {"loss", Nullable("object")},
                {"tgs_pattern", {{"type", "string"}}},
                {"phases", {{"type", "array"}}},
                {"periodic_overhead", {{"type", "object"}, {"required", {"detected", "spikes", "period_steps", "overhead_pct"}}}},
                {"artifacts", {{"type", "object"}, {"required", {"xplane_profiles", "hlo_dumps", "tensorboard_event_files"}}}},
                {"report", {{"type", {"object", "null"}}, {"properties", {{"path", {{"type", "string"}}}, {"url", {{"type", "string"}}}}}}},
                {"notes", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                {"verdict", {{"type", "string"}}},
                {"truncated", {{"type", "boolean"}}},
                {"omitted", {{"type", "string"}}}}}};
}

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

PerfOptions PerfOptionsFromArguments(const Json& args) {
  PerfOptions o;
  if (args.contains("warmup_steps")) {
    int64_t w = args["warmup_steps"].get<int64_t>();
    if (w < 0 || w > 100000) throw std::invalid_argument("warmup_steps must be between 0 and 100000");
    o.warmup_steps = static_cast<int>(w);
  }
  if (args.contains("gpu")) o.gpu = args["gpu"].get<std::string>();
  if (args.contains("dtype")) o.dtype = args["dtype"].get<std::string>();
  if (args.contains("report")) o.write_report = args["report"].get<bool>();
  if (args.contains("now")) o.now = args["now"].get<std::string>();
  return o;
}

Json PerfAnalysisStructured(const JobFiles& job, const Json& args) {
  PerfReport r = AnalyzePerf(job, PerfOptionsFromArguments(args));
  Json out = std::move(r.structured);
  out["truncated"] = false;
  Bound(out, args.value("detail", std::string("summary")) == "full" ? kFullTokens : kDefaultTokens);
  return out;
}

mcp::Tool PerfAnalysisTool(const std::filesystem::path& workspace) {
  mcp::Tool t;
  t.name = "perf_analysis";
  t.title = "Steady-state throughput of a job";
  t.description = kDescription;
  t.input_schema = InputSchema();
  t.output_schema = OutputSchema();
  // It writes (and rewrites) only its own report file in the job directory.
  t.annotations = mcp::ToolAnnotations{false, false, true, false};
  t.handler = [workspace](const Json& args, mcp::CallContext&) -> mcp::ToolResult {
    try {
      Workspace ws(workspace);
      JobFiles job = ws.Resolve(args["job"].get<std::string>());
      Json out = PerfAnalysisStructured(job, args);
      std::string text = PerfText(out);
      return mcp::ToolResult::Structured(std::move(out), std::move(text));
    } catch (const std::exception& e) {
      return mcp::ToolResult::Error(std::string("perf_analysis: ") + e.what());
    }
  };
  return t;
}

void RegisterPerfAnalysis(mcp::Registry& registry, const ProductOptions& options) {
  registry.AddTool(PerfAnalysisTool(options.workspace));
}

}  // namespace mt::tools
