#include "tools/catalog/triage_log_tool.h"

#include "tools/logs/scan_cache.h"
#include "tools/logs/triage.h"

namespace mt::tools {
namespace {

constexpr const char* kDescription =
    "Classify a training job from its log: the root cause the log proves (not its last "
    "line), status, stage, exit code, up to 5 evidence lines with file, line number and "
    "rank, step progress (steady step time, expected step now, checkpoint loss, ETA), the "
    "hang rule with its threshold, the heartbeat false-positive checklist (accused tasks, "
    "hosts, heartbeat-stop time), TGS phases and degradation, and next_steps naming the mt "
    "tool and arguments to call next. Use it first for any question about a job's state or "
    "failure (\"why did 7877 stop\", \"is 8308 healthy\"). Scans logs of any size in one "
    "pass and caches the result. Give `now` (ISO-8601) to judge hangs at a fixed time.";

// The text block for clients that show no structured output: the headline, the remedy and
// the evidence lines.
std::string Summary(const TriageAnswer& t) {
  std::string text = t.headline;
  if (t.remedy) text += "\nremedy: " + *t.remedy;
  for (const auto& e : t.evidence)
    text += "\n  " + e.file + ":" + std::to_string(e.line) + "  " + e.text.substr(0, 160);
  return text;
}

}  // namespace

TriageOptions TriageOptionsFrom(const TriageLogInput& in) {
  return MakeTriageOptions(in.now, in.detail == "full", in.heartbeat_timeout_seconds);
}

mcp::Tool TriageLogTool(const std::filesystem::path& workspace) {
  return mcp::MakeTypedTool<TriageLogInput, TriageAnswer>(
      {.name = "triage_log",
       .title = "Triage a training job log",
       .description = kDescription,
       .annotations = mcp::ToolAnnotations::ReadOnly()},
      [workspace](const TriageLogInput& in, mcp::CallContext&) {
        JobFiles job = Workspace(workspace).Resolve(in.job);
        mcp::WithMeta<TriageAnswer> out;
        Json scan_meta;
        out.answer = Triage(job, TriageOptionsFrom(in), ScanCache::Shared(), &scan_meta);
        out.meta = Json{{"mt/scan", std::move(scan_meta)}};
        return out;
      },
      Summary);
}

void RegisterTriageLog(mcp::Registry& registry, const ProductOptions& options) {
  registry.AddTool(TriageLogTool(options.workspace));
}

}  // namespace mt::tools
