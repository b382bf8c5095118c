#include "tools/catalog/triage_log_tool.h"

#include <stdexcept>

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

Json EvidenceSchema() {
  return Json{{"type", "object"},
              {"required", {"file", "line", "rank", "time", "signature", "text"}},
              {"additionalProperties", false},
              {"properties",
               {{"file", {{"type", "string"}}},
                {"line", {{"type", "integer"}, {"minimum", 1}}},
                {"rank", {{"type", {"integer", "null"}}}},
                {"time", {{"type", {"string", "null"}}}},
                {"signature", {{"type", "string"}}},
                {"text", {{"type", "string"}}}}}};
}

Json Nullable(const char* type) { return Json{{"type", {type, "null"}}}; }

// A closed object schema: every listed property required, nothing else allowed.
Json obj(Json props) {
  Json req = Json::array();
  for (auto& [k, v] : props.items()) req.push_back(k);
  return Json{{"type", "object"}, {"properties", props}, {"required", req}, {"additionalProperties", false}};
}

Json OutputSchema() {
  Json classes = TriageClasses();
  Json phase = obj({{"start_step", {{"type", "integer"}}}, {"end_step", {{"type", "integer"}}},
                    {"steps", {{"type", "integer"}}}, {"mean", {{"type", "number"}}},
                    {"std", {{"type", "number"}}}, {"change_pct", {{"type", "number"}}}});
  Json task = obj({{"task", {{"type", "integer"}}}, {"host", Nullable("string")},
                   {"logged_own_death", {{"type", "boolean"}}}, {"own_death_line", Nullable("integer")},
                   {"last_step", Nullable("integer")}, {"last_step_line", Nullable("integer")},
                   {"progress_after_stop", {{"type", "boolean"}}}, {"in_lockstep", {{"type", "boolean"}}}});
  Json heartbeat = obj({{"report_line", {{"type", "integer"}}}, {"reporters", {{"type", "integer"}}},
                        {"crash_time", Nullable("string")}, {"timeout_seconds", Nullable("integer")},
                        {"timeout_source", {{"enum", {"log", "argument", "unknown"}}}},
                        {"heartbeat_stop_time", Nullable("string")},
                        {"accused", {{"type", "array"}, {"items", task}}},
                        {"neighbours", {{"type", "array"}, {"items", obj({{"task", {{"type", "integer"}}}, {"host", Nullable("string")}})}}},
                        {"false_positive", {{"type", "boolean"}}}, {"hang_before_heartbeat", {{"type", "boolean"}}},
                        {"reasoning", {{"type", "string"}}}});
  Json tgs = obj({{"steady_mean", {{"type", "number"}}}, {"tail_mean", {{"type", "number"}}},
                  {"degradation_pct", {{"type", "number"}}}, {"degraded", {{"type", "boolean"}}},
                  {"pattern", {{"enum", {"stable", "constant_drop", "phased", "gradual", "one_time", "improved", "insufficient_data"}}}},
                  {"warmup_steps", {{"type", "integer"}}}, {"spikes", {{"type", "integer"}}},
                  {"decline_onset_step", Nullable("integer")},
                  {"phases", {{"type", "array"}, {"items", phase}}}});
  Json waves = Json{{"type", "object"},
                    {"required", {"count", "before_training", "during_training", "single_replica_restore"}},
                    {"properties",
                     {{"count", {{"type", "integer"}}}, {"before_training", {{"type", "integer"}}},
                      {"during_training", {{"type", "integer"}}}, {"single_replica_restore", {{"type", "boolean"}}},
                      {"waves", {{"type", "array"}, {"items", {{"type", "object"}}}}}}},
                    {"additionalProperties", false}};
  Json progress = obj({{"steps_seen", {{"type", "integer"}}}, {"entries_per_step", {{"type", "number"}}},
                       {"steady_step_seconds", Nullable("number")}, {"recent_step_seconds", Nullable("number")},
                       {"last_progress_time", Nullable("string")},
                       {"last_progress_source", {{"enum", {"line_timestamp", "log_activity", "file_mtime", "none"}}}},
                       {"seconds_since_progress", Nullable("number")}, {"expected_step_now", Nullable("integer")},
                       {"step_seconds_sum", {{"type", "number"}}}, {"step_seconds_rank", Nullable("integer")},
                       {"wall_seconds", Nullable("number")}, {"unaccounted_seconds", Nullable("number")},
                       {"stall_detected", {{"type", "boolean"}}}, {"total_steps", Nullable("integer")},
                       {"percent_complete", Nullable("number")}, {"checkpoint_period", Nullable("integer")},
                       {"checkpoint_period_assumed", {{"type", "boolean"}}}, {"last_checkpoint_step", Nullable("integer")},
                       {"progress_lost_steps", Nullable("integer")}, {"eta_seconds", Nullable("number")}});
  Json hang = obj({{"stalled", {{"type", "boolean"}}}, {"threshold_seconds", {{"type", "number"}}},
                   {"silent_seconds", Nullable("number")}, {"measured_until", {{"enum", {"job end", "now"}}}},
                   {"rule", {{"type", "string"}}}});
  Json job = obj({{"id", Nullable("string")}, {"name", {{"type", "string"}}},
                  {"kind", {{"enum", {"slurm", "local", "k8s", "unknown"}}}}, {"log", {{"type", "string"}}},
                  {"dir", Nullable("string")}, {"model", Nullable("string")}, {"nodes", Nullable("integer")},
                  {"nodelist", Nullable("string")}, {"uses_ray", {{"type", "boolean"}}}, {"has_tsdb", {{"type", "boolean"}}}});
  Json step = obj({{"tool", {{"type", "string"}}}, {"arguments", {{"type", "object"}}}, {"reason", {{"type", "string"}}}});
  Json scan = obj({{"files", {{"type", "integer"}}}, {"bytes", {{"type", "integer"}}}, {"lines", {{"type", "integer"}}},
                   {"oversized_lines", {{"type", "integer"}}}, {"changed_during_read", {{"type", "boolean"}}},
                   {"steps_from", {{"type", "string"}}}});
  Json line_ref = Json{{"anyOf", {Json{{"type", "null"}}, obj({{"line", {{"type", "integer"}}},
                                                                {"time", Nullable("string")},
                                                                {"text", {{"type", "string"}}}})}}};
  Json lifecycle = obj({{"stage", {{"enum", {"launch", "init", "compile", "training", "teardown", "ended"}}}},
                        {"ended", {{"type", "boolean"}}},
                        {"end_source", {{"enum", {"job_summary", "launcher_end_line", "slurm", "srun_task_exit", nullptr}}}},
                        {"end_line", line_ref}, {"exit_code", Nullable("integer")},
                        {"training_finished", {{"type", "boolean"}}}, {"training_end_line", line_ref}});
  Json clock = obj({{"source", {{"enum", {"log_timestamp", "file_mtime", "none"}}}},
                    {"last_activity_time", Nullable("string")}, {"last_activity_line", Nullable("integer")},
                    {"layout", Nullable("string")}, {"year_inferred", {{"type", "boolean"}}}, {"note", Nullable("string")}});
  return obj({{"job", job},
              {"now", {{"type", "string"}}},
              {"root_cause_rule", {{"type", "string"}}},
              {"undecided", Nullable("string")},
              {"lifecycle", lifecycle},
              {"clock", clock},
              {"class", {{"type", "string"}, {"enum", classes}}},
              {"secondary", {{"type", "array"}, {"items", {{"type", "string"}, {"enum", classes}}}}},
              {"status", {{"enum", {"completed", "failed", "cancelled", "running", "hang", "unknown"}}}},
              {"soft_success", {{"type", "boolean"}}},
              {"stage", Nullable("string")},
              {"training_phase", {{"enum", {"init", "compile", "steps", nullptr}}}},
              {"exit_code", Nullable("integer")},
              {"headline", {{"type", "string"}}},
              {"evidence", {{"type", "array"}, {"items", EvidenceSchema()}}},
              {"evidence_total", {{"type", "integer"}, {"minimum", 0}}},
              {"first_step", Nullable("integer")},
              {"last_step", Nullable("integer")},
              {"restored_from_step", Nullable("integer")},
              {"progress", progress},
              {"hang", hang},
              {"heartbeat", {{"anyOf", {Json{{"type", "null"}}, heartbeat}}}},
              {"tgs", {{"anyOf", {Json{{"type", "null"}}, tgs}}}},
              {"rccl_init_waves", {{"anyOf", {Json{{"type", "null"}}, waves}}}},
              {"signature_counts", {{"type", "object"}, {"additionalProperties", {{"type", "integer"}}}}},
              {"next_steps", {{"type", "array"}, {"items", step}}},
              {"remedy", Nullable("string")},
              {"scan", scan},
              {"truncated", {{"type", "boolean"}}},
              {"omitted", Nullable("string")}});
}

}  // namespace

TriageOptions TriageOptionsFrom(const TriageLogInput& in) {
  return MakeTriageOptions(in.now, in.detail == "full", in.heartbeat_timeout_seconds);
}

mcp::Tool TriageLogTool(const std::filesystem::path& workspace) {
  mcp::Tool t;
  t.name = "triage_log";
  t.title = "Triage a training job log";
  t.description = kDescription;
  t.input_schema = mcp::SchemaOf<TriageLogInput>();
  t.output_schema = OutputSchema();
  t.annotations = mcp::ToolAnnotations::ReadOnly();
  t.handler = [workspace](const Json& args, mcp::CallContext&) -> mcp::ToolResult {
    try {
      Workspace ws(workspace);
      const TriageLogInput in = mcp::Decode<TriageLogInput>(args);
      JobFiles job = ws.Resolve(in.job);
      Json scan_meta;
      Json out = TriageJob(job, TriageOptionsFrom(in), ScanCache::Shared(), &scan_meta);
      std::string text = out["headline"].get<std::string>();
      if (out["remedy"].is_string()) text += "\nremedy: " + out["remedy"].get<std::string>();
      for (const auto& e : out["evidence"])
        text += "\n  " + e["file"].get<std::string>() + ":" + std::to_string(e["line"].get<uint64_t>()) + "  " +
                e["text"].get<std::string>().substr(0, 160);
      mcp::ToolResult r = mcp::ToolResult::Structured(std::move(out), std::move(text));
      r.meta = Json{{"mt/scan", std::move(scan_meta)}};
      return r;
    } catch (const std::exception& e) {
      return mcp::ToolResult::Error(std::string("triage_log: ") + e.what());
    }
  };
  return t;
}

void RegisterTriageLog(mcp::Registry& registry, const ProductOptions& options) {
  registry.AddTool(TriageLogTool(options.workspace));
}

}  // namespace mt::tools
