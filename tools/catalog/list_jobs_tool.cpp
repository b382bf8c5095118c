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

ListedJob DescribeJob(const JobFiles& j, int64_t now, bool full) {
  ListedJob out;
  if (!j.id.empty()) out.id = j.id;
  out.name = j.name;
  out.kind = j.kind;
  if (!j.log.empty()) out.log = j.log_display;
  if (!j.dir.empty()) out.dir = j.dir_display;
  out.has_tsdb = j.has_tsdb;
  if (full) {
    out.rank_logs = static_cast<int64_t>(j.rank_logs.size());
    out.ray_worker_logs = static_cast<int64_t>(j.ray_worker_logs.size());
  }
  if (j.log.empty()) {
    out.status = "pending";
    return out;
  }
  Probe p;
  try {
    p = ProbeLog(j.log);
  } catch (const std::exception& e) {
    out.status = "unreadable";
    return out;
  }
  auto header = [&](const char* k) -> std::optional<std::string> {
    auto it = p.head.header.find(k);
    return it == p.head.header.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  out.model = header("MODEL_NAME");
  if (auto n = header("NNODES")) {
    try {
      out.nodes = std::stoi(*n);
    } catch (const std::exception&) {
    }
  }
  if (out.name.empty() && header("JOB_NAME")) out.name = *header("JOB_NAME");
  out.last_write = FormatIso8601(p.mtime);
  const LogScan& t = p.tail;
  int64_t last_step = -1;
  for (const LogScan* s : {&p.head, &p.tail})
    if (!s->steps.empty()) last_step = std::max(last_step, s->steps.back().step);
  if (last_step >= 0) out.last_step = last_step;
  if (p.head.first_time != kNoTime) out.start_time = FormatIso8601(p.head.first_time);
  const JobSummary& sum = t.summary.present ? t.summary : p.head.summary;
  if (sum.present && !sum.status.empty()) {
    int code = sum.exit_code.value_or(1);
    out.status = sum.status == "SUCCESS" ? "completed" : (code == 130 || code == 143) ? "cancelled" : "failed";
    out.end_time = FormatIso8601(p.mtime);
  } else if (!t.slurm_ends.empty()) {
    out.status = t.slurm_ends.back().reason == "NODE FAILURE" ? "failed" : "cancelled";
    out.end_time = FormatIso8601(t.slurm_ends.back().time != kNoTime ? t.slurm_ends.back().time : p.mtime);
  } else {
    out.status = now - p.mtime < kRunningWithin ? "running" : "unknown";
  }
  return out;
}

}  // namespace

ListJobsAnswer ListJobs(const std::filesystem::path& workspace, const ListJobsInput& in) {
  int64_t now;
  if (in.now) {
    auto t = ParseIso8601(*in.now);
    if (!t) throw std::invalid_argument("now: '" + *in.now + "' is not an ISO-8601 time");
    now = *t;
  } else {
    now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  }
  const bool full = in.detail == "full";
  Workspace ws(workspace);
  std::vector<std::string> warnings;
  auto jobs = ws.List(&warnings);
  ListJobsAnswer out;
  const size_t limit = static_cast<size_t>(in.limit.value_or(full ? kFullJobs : kBriefJobs));
  size_t matched = 0;
  // Newest jobs are the interesting ones: list from the end of the id order.
  for (auto it = jobs.rbegin(); it != jobs.rend(); ++it) {
    ListedJob j = DescribeJob(*it, now, full);
    if (in.status && j.status != *in.status) continue;
    ++matched;
    if (out.jobs.size() < limit) out.jobs.push_back(std::move(j));
  }
  out.workspace = ws.root().string();
  out.now = FormatIso8601(now);
  out.total = static_cast<int64_t>(matched);
  out.truncated = matched > out.jobs.size();
  if (out.truncated)
    out.omitted = std::to_string(matched - out.jobs.size()) + " older jobs omitted; raise `limit` (up to 500) or filter by `status`";
  if (warnings.size() > 20) warnings.resize(20);
  out.warnings = std::move(warnings);
  return out;
}

mcp::Tool ListJobsTool(const std::filesystem::path& workspace) {
  return mcp::MakeTypedTool<ListJobsInput, ListJobsAnswer>(
      {.name = "list_jobs",
       .title = "List training jobs",
       .description = kDescription,
       .annotations = mcp::ToolAnnotations::ReadOnly()},
      [workspace](const ListJobsInput& in, mcp::CallContext&) { return ListJobs(workspace, in); },
      [](const ListJobsAnswer& out) {
        std::string text = std::to_string(out.total) + " jobs in " + out.workspace;
        for (const auto& j : out.jobs) {
          text += "\n  " + j.id.value_or("?") + "  " + j.status;
          if (j.last_step) text += "  step " + std::to_string(*j.last_step);
          text += "  " + j.name;
        }
        return text;
      });
}

void RegisterListJobs(mcp::Registry& registry, const ProductOptions& options) {
  registry.AddTool(ListJobsTool(options.workspace));
}

}  // namespace mt::tools
