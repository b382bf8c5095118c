#include "tools/catalog/list_jobs_tool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

#include "tools/common/iso_time.h"
#include "tools/logs/log_scanner.h"
#include "tools/logs/triage_progress.h"
#include "tools/logs/workspace.h"

namespace mt::tools {
namespace {

constexpr size_t kHeadBytes = 64 * 1024;
constexpr size_t kTailBytes = 256 * 1024;
constexpr int64_t kRunningWithin = 900;    // reference §3.3: no summary, mtime < 900 s ago
constexpr size_t kBriefJobs = 40;
constexpr size_t kFullJobs = 500;

constexpr const char* kDescription =
    "List the jobs in the workspace: id, name, model, nodes, status, last step, start and "
    "end time, whether a Prometheus TSDB was kept, and the log and directory paths. Use it "
    "to find a job id or to see what ran recently; status here comes from a quick look at "
    "each log's head and tail (JOB SUMMARY, Slurm cancellation, log age) — call triage_log "
    "on a job for the root cause and the exact state.";

struct Probe {
  LogScan head, tail;
  int64_t mtime = kNoTime;
  uint64_t size = 0;
};

std::string ReadRange(int fd, uint64_t offset, size_t len) {
  std::string s(len, '\0');
  ssize_t r = ::pread(fd, s.data(), len, static_cast<off_t>(offset));
  s.resize(r > 0 ? static_cast<size_t>(r) : 0);
  return s;
}

Probe ProbeLog(const std::filesystem::path& log) {
  Probe p;
  int fd = ::open(log.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw std::runtime_error(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw std::runtime_error("not a regular file");
  }
  p.mtime = st.st_mtim.tv_sec;
  p.size = static_cast<uint64_t>(st.st_size);
  std::string head = ReadRange(fd, 0, static_cast<size_t>(std::min<uint64_t>(p.size, kHeadBytes)));
  std::string tail;
  if (p.size > kHeadBytes) {
    uint64_t start = p.size > kTailBytes ? p.size - kTailBytes : kHeadBytes;
    tail = ReadRange(fd, start, static_cast<size_t>(p.size - start));
    size_t nl = tail.find('\n');   // start at a line boundary
    tail = nl == std::string::npos ? std::string() : tail.substr(nl + 1);
  }
  ::close(fd);
  LogScanner hs(p.mtime);
  hs.Feed(head.data(), head.size(), true);
  p.head = hs.Result();
  if (!tail.empty()) {
    LogScanner ts(p.mtime);
    ts.Feed(tail.data(), tail.size(), true);
    p.tail = ts.Result();
  } else {
    p.tail = p.head;
  }
  return p;
}

Json JobJson(const JobFiles& j, int64_t now, bool full) {
  Json out{{"id", j.id.empty() ? Json(nullptr) : Json(j.id)},
           {"name", j.name},
           {"kind", j.kind},
           {"log", j.log.empty() ? Json(nullptr) : Json(j.log_display)},
           {"dir", j.dir.empty() ? Json(nullptr) : Json(j.dir_display)},
           {"has_tsdb", j.has_tsdb},
           {"model", nullptr},
           {"nodes", nullptr},
           {"status", "unknown"},
           {"last_step", nullptr},
           {"start_time", nullptr},
           {"end_time", nullptr},
           {"last_write", nullptr}};
  if (full) out["rank_logs"] = j.rank_logs.size(), out["ray_worker_logs"] = j.ray_worker_logs.size();
  if (j.log.empty()) {
    out["status"] = "pending";
    return out;
  }
  Probe p;
  try {
    p = ProbeLog(j.log);
  } catch (const std::exception& e) {
    out["status"] = "unreadable";
    return out;
  }
  auto hv = [&](const char* k) -> Json {
    auto it = p.head.header.find(k);
    return it == p.head.header.end() ? Json(nullptr) : Json(it->second);
  };
  out["model"] = hv("MODEL_NAME");
  if (auto n = hv("NNODES"); n.is_string()) {
    try {
      out["nodes"] = std::stoi(n.get<std::string>());
    } catch (const std::exception&) {
    }
  }
  if (out["name"] == "" && hv("JOB_NAME").is_string()) out["name"] = hv("JOB_NAME");
  out["last_write"] = FormatIso8601(p.mtime);
  const LogScan& t = p.tail;
  int64_t last_step = -1;
  for (const LogScan* s : {&p.head, &p.tail})
    if (!s->steps.empty()) last_step = std::max(last_step, s->steps.back().step);
  if (last_step >= 0) out["last_step"] = last_step;
  int64_t start = p.head.first_time;
  if (start != kNoTime) out["start_time"] = FormatIso8601(start);
  std::string status;
  const JobSummary& sum = t.summary.present ? t.summary : p.head.summary;
  if (sum.present && !sum.status.empty()) {
    int code = sum.exit_code.value_or(1);
    status = sum.status == "SUCCESS" ? "completed" : (code == 130 || code == 143) ? "cancelled" : "failed";
    out["end_time"] = FormatIso8601(p.mtime);
  } else if (!t.slurm_ends.empty()) {
    status = t.slurm_ends.back().reason == "NODE FAILURE" ? "failed" : "cancelled";
    out["end_time"] = t.slurm_ends.back().time != kNoTime ? FormatIso8601(t.slurm_ends.back().time) : FormatIso8601(p.mtime);
  } else {
    status = now - p.mtime < kRunningWithin ? "running" : "unknown";
  }
  out["status"] = status;
  return out;
}

Json JobSchema() {
  auto nul = [](const char* t) { return Json{{"type", {t, "null"}}}; };
  Json props{{"id", nul("string")},
             {"name", {{"type", "string"}}},
             {"kind", {{"enum", {"slurm", "local", "k8s", "unknown"}}}},
             {"log", nul("string")},
             {"dir", nul("string")},
             {"has_tsdb", {{"type", "boolean"}}},
             {"model", nul("string")},
             {"nodes", nul("integer")},
             {"status", {{"enum", {"completed", "failed", "cancelled", "running", "unknown", "pending", "unreadable"}}}},
             {"last_step", nul("integer")},
             {"start_time", nul("string")},
             {"end_time", nul("string")},
             {"last_write", nul("string")}};
  Json req = Json::array();
  for (auto& [k, v] : props.items()) req.push_back(k);
  props["rank_logs"] = {{"type", "integer"}};
  props["ray_worker_logs"] = {{"type", "integer"}};
  return Json{{"type", "object"}, {"properties", props}, {"required", req}, {"additionalProperties", false}};
}

}  // namespace

Json ListJobsStructured(const std::filesystem::path& workspace, const Json& args) {
  int64_t now;
  if (args.contains("now")) {
    auto t = ParseIso8601(args["now"].get<std::string>());
    if (!t) throw std::invalid_argument("now: '" + args["now"].get<std::string>() + "' is not an ISO-8601 time");
    now = *t;
  } else {
    now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  }
  bool full = args.value("detail", std::string("summary")) == "full";
  std::string filter = args.value("status", std::string());
  Workspace ws(workspace);
  std::vector<std::string> warnings;
  auto jobs = ws.List(&warnings);
  Json list = Json::array();
  size_t limit = static_cast<size_t>(args.value("limit", static_cast<int>(full ? kFullJobs : kBriefJobs)));
  size_t matched = 0;
  // Newest jobs are the interesting ones: list from the end of the id order.
  for (auto it = jobs.rbegin(); it != jobs.rend(); ++it) {
    Json j = JobJson(*it, now, full);
    if (!filter.empty() && j["status"] != filter) continue;
    ++matched;
    if (list.size() < limit) list.push_back(std::move(j));
  }
  Json out{{"workspace", ws.root().string()},
           {"now", FormatIso8601(now)},
           {"total", matched},
           {"jobs", list},
           {"truncated", matched > list.size()},
           {"omitted", matched > list.size() ? Json(std::to_string(matched - list.size()) +
                                                    " older jobs omitted; raise `limit` (up to 500) or filter by `status`")
                                             : Json(nullptr)},
           {"warnings", warnings.size() > 20 ? Json(std::vector<std::string>(warnings.begin(), warnings.begin() + 20)) : Json(warnings)}};
  return out;
}

mcp::Tool ListJobsTool(const std::filesystem::path& workspace) {
  mcp::Tool t;
  t.name = "list_jobs";
  t.title = "List training jobs";
  t.description = kDescription;
  t.input_schema = Json{
      {"type", "object"},
      {"additionalProperties", false},
      {"properties",
       {{"status", {{"enum", {"completed", "failed", "cancelled", "running", "unknown", "pending", "unreadable"}},
                    {"description", "only jobs with this quick status"}}},
        {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 500}, {"description", "jobs returned at most (default 40, newest first)"}}},
        {"now", {{"type", "string"}, {"maxLength", 40}, {"description", "ISO-8601 time for the running/unknown decision (default: now)"}}},
        {"detail", {{"enum", {"summary", "full"}}, {"default", "summary"}}}}}};
  t.output_schema = Json{{"type", "object"},
                         {"additionalProperties", false},
                         {"required", {"workspace", "now", "total", "jobs", "truncated", "omitted", "warnings"}},
                         {"properties",
                          {{"workspace", {{"type", "string"}}},
                           {"now", {{"type", "string"}}},
                           {"total", {{"type", "integer"}}},
                           {"jobs", {{"type", "array"}, {"items", JobSchema()}}},
                           {"truncated", {{"type", "boolean"}}},
                           {"omitted", {{"type", {"string", "null"}}}},
                           {"warnings", {{"type", "array"}, {"items", {{"type", "string"}}}}}}}};
  t.annotations = mcp::ToolAnnotations::ReadOnly();
  t.handler = [workspace](const Json& args, mcp::CallContext&) -> mcp::ToolResult {
    try {
      Json out = ListJobsStructured(workspace, args);
      std::string text = std::to_string(out["total"].get<size_t>()) + " jobs in " + out["workspace"].get<std::string>();
      for (const auto& j : out["jobs"]) {
        text += "\n  " + (j["id"].is_string() ? j["id"].get<std::string>() : std::string("?")) + "  " +
                j["status"].get<std::string>();
        if (j["last_step"].is_number()) text += "  step " + std::to_string(j["last_step"].get<int64_t>());
        text += "  " + j["name"].get<std::string>();
      }
      return mcp::ToolResult::Structured(std::move(out), std::move(text));
    } catch (const std::exception& e) {
      return mcp::ToolResult::Error(std::string("list_jobs: ") + e.what());
    }
  };
  return t;
}

void RegisterListJobs(mcp::Registry& registry, const ProductOptions& options) {
  registry.AddTool(ListJobsTool(options.workspace));
}

}  // namespace mt::tools
