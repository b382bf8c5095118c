#include "tools/catalog/run_sweep_tool.h"

#include <chrono>
#include <stdexcept>

#include "launcher/launch/model_config.h"
#include "mcp/call_context.h"
#include "tools/gate/sweep_report.h"
#include "tools/gate/sweep_runner.h"
#include "tools/gate/sweep_spec.h"

namespace mt::tools {
namespace {

constexpr const char* kDescription =
    "Run a CI regression sweep the server defines (configs/sweeps/<sweep>.yaml): every model and node count "
    "is submitted under the server's CI policy, waited for, and its steady-state TGS measured. Only for "
    "callers with role ci (an agent proposes single jobs with submit_job, which a human approves). Takes "
    "minutes: clients with the MCP Tasks extension get a task (progress in its status, the result after "
    "completion); cancelling it cancels every job the sweep submitted.";

// The models directory the server plans with (configs/models unless configured).
std::filesystem::path ModelsDir(const ApprovalEnv& env) {
  return std::filesystem::absolute(env.models_dir.empty() ? launch::DefaultModelsDir() : env.models_dir);
}

// The sweep file the server has under this name: configs/sweeps next to the models.
std::filesystem::path SweepFile(const ApprovalEnv& env, const std::string& name) {
  const std::filesystem::path dir = ModelsDir(env).parent_path() / "sweeps";
  for (const char* ext : {".yaml", ".yml"})
    if (std::error_code ec; std::filesystem::is_regular_file(dir / (name + ext), ec)) return dir / (name + ext);
  throw std::invalid_argument("no sweep '" + name + "' in the server's " + dir.string());
}

RunSweepAnswer Answer(const std::string& name, const SweepComparison& cmp, bool cancelled, double seconds) {
  RunSweepAnswer a;
  a.sweep = name;
  a.status = cancelled ? "cancelled" : cmp.failed() ? "failed" : "passed";
  a.seconds = seconds;
  for (const auto& row : cmp.rows) {
    const SweepResult& r = row.current;
    SweepRunAnswer v{r.model, r.nodes, r.status, std::nullopt, std::nullopt, std::nullopt, std::nullopt, row.verdict,
                     std::nullopt};
    if (!r.job_id.empty()) v.job_id = r.job_id;
    if (r.status == "ok") v.tgs = r.tgs, v.tgs_std = r.tgs_std, v.steps = static_cast<int64_t>(r.steps);
    if (!r.detail.empty()) v.detail = r.detail;
    a.runs.push_back(std::move(v));
  }
  a.markdown = SweepMarkdown(cmp, name);
  return a;
}

RunSweepAnswer RunSweepCall(const ProductOptions& options, const RunSweepInput& in, mcp::CallContext& ctx) {
  if (ctx.caller().role != "ci")
    throw std::invalid_argument("only a caller with role ci may run a sweep: its plans are approved by the server's CI "
                                "policy, not by a human (your role is '" + ctx.caller().role +
                                "'); propose a single job with submit_job instead");
  SweepSpec spec = LoadSweepSpec(SweepFile(options.approvals, in.sweep));
  if (in.threshold_pct) spec.threshold_pct = *in.threshold_pct;
  SweepEnv env;
  env.approval = options.approvals;
  if (env.approval.workspace.empty()) env.approval.workspace = options.workspace;
  env.requester = "run_sweep (" + ctx.caller().name + ")";
  int events = 0;
  env.progress = [&ctx, &events](const std::string& line) { ctx.ReportProgress(++events, std::nullopt, line); };
  env.cancelled = [&ctx] { return ctx.cancelled(); };
  // The server's own code state: the repository its models come from.
  const std::filesystem::path models = ModelsDir(env.approval), repo = models.parent_path().parent_path();
  std::error_code ec;
  const bool in_repo = std::filesystem::equivalent(repo / "configs" / "models", models, ec);
  const std::vector<SweepState> states{{"current", in_repo ? repo : models}};
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<SweepResult> results;
  if (std::string e = RunSweep(spec, states, env, &results); !e.empty()) throw std::runtime_error(e);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  SweepComparison cmp = CompareSweep({}, results, spec.threshold_pct);
  cmp.baseline_label = "no baseline";
  return Answer(spec.name, cmp, ctx.cancelled(), seconds);
}

}  // namespace

void RegisterRunSweep(mcp::Registry& registry, const ProductOptions& options) {
  registry.AddTool(mcp::MakeTypedTool<RunSweepInput, RunSweepAnswer>(
      {.name = "run_sweep",
       .title = "Run a CI regression sweep (role ci)",
       .description = kDescription,
       // Submits and cancels jobs (not read-only, not idempotent: each call is new jobs);
       // it touches the cluster, an open world.
       .annotations = mcp::ToolAnnotations{false, false, false, true},
       .task_support = mcp::TaskSupport::kOptional},
      [options](const RunSweepInput& in, mcp::CallContext& ctx) { return RunSweepCall(options, in, ctx); },
      [](const RunSweepAnswer& a) { return "sweep " + a.sweep + ": " + a.status + "\n\n" + a.markdown; }));
}

}  // namespace mt::tools
