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

ReadLogAnswer ReadLog(const JobFiles& job, const ReadLogInput& in, const Workspace* ws) {
  std::filesystem::path file = job.log;
  std::string display = job.log_display;
  if (in.file) {
    const std::string& f = *in.file;
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
  const bool full = in.detail == "full";
  WindowRequest r;
  r.lines = in.lines.value_or("");
  if (in.rank) r.rank = static_cast<int>(*in.rank);
  r.grep = in.grep.value_or("");
  r.context = static_cast<int>(in.context.value_or(0));
  r.max_lines = static_cast<size_t>(in.max_lines.value_or(full ? 500 : 50));
  r.max_line_chars = full ? 2000 : 240;
  r.max_total_chars = full ? 70000 : 7000;
  Window w = ReadWindow(file, r);
  ReadLogAnswer out;
  if (!job.id.empty()) out.job = job.id;
  out.file = display;
  for (const auto& l : w.lines)
    out.lines.push_back({static_cast<int64_t>(l.line), l.text,
                         l.rank >= 0 ? mcp::Nullable<int64_t>(l.rank) : mcp::Nullable<int64_t>(), l.match});
  out.returned = static_cast<int64_t>(w.lines.size());
  if (w.first_line) out.first_line = static_cast<int64_t>(w.first_line);
  if (w.last_line) out.last_line = static_cast<int64_t>(w.last_line);
  if (w.total_lines) out.total_lines = static_cast<int64_t>(*w.total_lines);
  out.matches = static_cast<int64_t>(w.matches);
  out.truncated = w.truncated;
  if (!w.resume.empty()) out.resume = w.resume;
  return out;
}

mcp::Tool ReadLogTool(const std::filesystem::path& workspace) {
  return mcp::MakeTypedTool<ReadLogInput, ReadLogAnswer>(
      {.name = "read_log",
       .title = "Read part of a job log",
       .description = kDescription,
       .annotations = mcp::ToolAnnotations::ReadOnly()},
      [workspace](const ReadLogInput& in, mcp::CallContext&) {
        Workspace ws(workspace);
        return ReadLog(ws.Resolve(in.job), in, &ws);
      },
      [](const ReadLogAnswer& out) {
        std::string text = out.file;
        for (const auto& l : out.lines) text += "\n" + std::to_string(l.line) + ": " + l.text;
        if (out.truncated && out.resume) text += "\n[truncated: continue with lines=\"" + *out.resume + "\"]";
        return text;
      });
}

void RegisterReadLog(mcp::Registry& registry, const ProductOptions& options) {
  registry.AddTool(ReadLogTool(options.workspace));
}

}  // namespace mt::tools
