#include "tools/catalog/read_log_tool.h"

#include <stdexcept>

#include "base/workspace_files.h"
#include "tools/logs/log_window.h"

namespace mt::tools {
namespace {

constexpr const char* kDescription =
    "Read a bounded window of a job's log instead of the whole file: `lines` \"A:B\" "
    "(1-based, inclusive), \"-200:\" for the last 200 lines; `rank` keeps one srun task's "
    "lines; `grep` (RE2) with `context` lines around each match. `file` picks another log of "
    "the job (rank-3.log, ray_logs/<host>/worker-….out). Returns at most `max_lines` lines "
    "(default 50) and says how to continue (`resume`). Use it to read the evidence lines "
    "triage_log cites, or to search a multi-GB log.";

}  // namespace

Json ReadLogStructured(const JobFiles& job, const Json& args, const Workspace* ws) {
  std::filesystem::path file = job.log;
  std::string display = job.log_display;
  if (args.contains("file")) {
    std::string f = args["file"].get<std::string>();
    std::filesystem::path fp(f);
    if (fp.is_absolute()) throw std::invalid_argument("file: '" + f + "' must be relative to the job directory");
    for (const auto& part : fp)
      if (part == "..") throw std::invalid_argument("file: '" + f + "' must not contain '..'");
    if (job.dir.empty()) throw std::invalid_argument("file: job has no directory to read '" + f + "' from");
    std::filesystem::path p = job.dir / fp;
    file = ws ? ws->Confine(p) : p;
    display = job.dir_display + "/" + f;
  }
  if (file.empty()) throw std::runtime_error("job has no log yet");
  // A regular file only (a FIFO must not block the call, a device must not be read); the
  // path was confined to the workspace above (Workspace::Confine / Resolve).
  if (auto f = base::OpenRegularFile(nullptr, file, display); !f.ok()) throw std::runtime_error(f.message());
  bool full = args.value("detail", std::string("summary")) == "full";
  WindowRequest r;
  r.lines = args.value("lines", std::string());
  if (args.contains("rank")) r.rank = args["rank"].get<int>();
  r.grep = args.value("grep", std::string());
  r.context = args.value("context", 0);
  r.max_lines = static_cast<size_t>(args.value("max_lines", full ? 500 : 50));
  r.max_line_chars = full ? 2000 : 240;
  r.max_total_chars = full ? 70000 : 7000;
  Window w = ReadWindow(file, r);
  Json out = WindowJson(w);
  out["job"] = job.id.empty() ? Json(nullptr) : Json(job.id);
  out["file"] = display;
  return out;
}

mcp::Tool ReadLogTool(const std::filesystem::path& workspace) {
  mcp::Tool t;
  t.name = "read_log";
  t.title = "Read part of a job log";
  t.description = kDescription;
  t.input_schema = Json{
      {"type", "object"},
      {"additionalProperties", false},
      {"required", {"job"}},
      {"properties",
       {{"job", {{"type", "string"}, {"minLength", 1}, {"maxLength", 1024}, {"description", "job id, job directory or log file name"}}},
        {"file", {{"type", "string"}, {"minLength", 1}, {"maxLength", 1024}, {"description", "another log inside the job directory"}}},
        {"lines", {{"type", "string"}, {"pattern", "^(-?[0-9]+)?(:[0-9]*)?$"}, {"maxLength", 41}}},
        {"rank", {{"type", "integer"}, {"minimum", 0}, {"maximum", 1000000}}},
        {"grep", {{"type", "string"}, {"minLength", 1}, {"maxLength", 1000}}},
        {"context", {{"type", "integer"}, {"minimum", 0}, {"maximum", 20}}},
        {"max_lines", {{"type", "integer"}, {"minimum", 1}, {"maximum", 2000}}},
        {"detail", {{"enum", {"summary", "full"}}, {"default", "summary"}}}}}};
  Json line{{"type", "object"},
            {"additionalProperties", false},
            {"required", {"line", "text", "rank", "match"}},
            {"properties",
             {{"line", {{"type", "integer"}, {"minimum", 1}}},
              {"text", {{"type", "string"}}},
              {"rank", {{"type", {"integer", "null"}}}},
              {"match", {{"type", "boolean"}}}}}};
  t.output_schema = Json{
      {"type", "object"},
      {"additionalProperties", false},
      {"required", {"job", "file", "lines", "returned", "first_line", "last_line", "total_lines", "matches", "truncated", "resume"}},
      {"properties",
       {{"job", {{"type", {"string", "null"}}}},
        {"file", {{"type", "string"}}},
        {"lines", {{"type", "array"}, {"items", line}}},
        {"returned", {{"type", "integer"}}},
        {"first_line", {{"type", {"integer", "null"}}}},
        {"last_line", {{"type", {"integer", "null"}}}},
        {"total_lines", {{"type", {"integer", "null"}}}},
        {"matches", {{"type", "integer"}}},
        {"truncated", {{"type", "boolean"}}},
        {"resume", {{"type", {"string", "null"}}}}}}};
  t.annotations = mcp::ToolAnnotations::ReadOnly();
  t.handler = [workspace](const Json& args, mcp::CallContext&) -> mcp::ToolResult {
    try {
      Workspace ws(workspace);
      JobFiles job = ws.Resolve(args["job"].get<std::string>());
      Json out = ReadLogStructured(job, args, &ws);
      std::string text = out["file"].get<std::string>();
      for (const auto& l : out["lines"]) text += "\n" + std::to_string(l["line"].get<uint64_t>()) + ": " + l["text"].get<std::string>();
      if (out["truncated"].get<bool>() && out["resume"].is_string())
        text += "\n[truncated: continue with lines=\"" + out["resume"].get<std::string>() + "\"]";
      return mcp::ToolResult::Structured(std::move(out), std::move(text));
    } catch (const std::exception& e) {
      return mcp::ToolResult::Error(std::string("read_log: ") + e.what());
    }
  };
  return t;
}

void RegisterReadLog(mcp::Registry& registry, const ProductOptions& options) {
  registry.AddTool(ReadLogTool(options.workspace));
}

}  // namespace mt::tools
