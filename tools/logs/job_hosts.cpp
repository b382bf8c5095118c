#include "tools/logs/job_hosts.h"

#include <re2/re2.h>

#include <algorithm>
#include <set>

#include "base/hostlist.h"
#include "base/workspace_files.h"

namespace mt::tools {
namespace {

constexpr uint64_t kHeadBytes = 4 << 20;

Scheduler& Installed() {
  static Scheduler s;
  return s;
}

std::vector<std::string> Sorted(std::set<std::string> s) { return {s.begin(), s.end()}; }

// The first 4 MiB of a log, or "" when it cannot be read.
std::string Head(const std::filesystem::path& file) {
  if (file.empty()) return "";
  auto root = base::FileRoot::Make(file.parent_path());
  if (!root.ok()) return "";
  auto f = base::OpenRegularFile(*root, file);
  if (!f.ok()) return "";
  base::LineReader lines(f->fd(), {.max_line_bytes = 4096, .max_total_bytes = kHeadBytes});
  std::string text;
  std::string_view line;
  while (lines.Next(&line)) text.append(line).push_back('\n');
  return text;
}

}  // namespace

void SetScheduler(Scheduler scheduler) { Installed() = std::move(scheduler); }

const SchedulerJob& SchedulerAnswer::Get() {
  if (!answer_) answer_ = Installed() && !job_.id.empty() ? Installed()(job_.id) : SchedulerJob{};
  return *answer_;
}

std::vector<std::string> NodelistInText(std::string_view text) {
  // KEY=value as env dumps and our launcher print it, also behind a launcher's line prefix
  // (srun -l's "0: ", mpirun's "[1,0]<stdout>:"); the value is Slurm's compact form.
  static const RE2 kList(
      R"((?m)(?:^|[\s:>])(?:export\s+)?(?:SLURM_JOB_NODELIST|SLURM_NODELIST|JOB_NODELIST)=["']?([A-Za-z0-9._\[\],-]+))");
  re2::StringPiece in(text.data(), text.size());
  std::string list;
  if (!RE2::FindAndConsume(&in, kList, &list)) return {};
  auto hosts = base::ExpandHostList(list, 100000);
  if (!hosts) return {};
  return Sorted({hosts->begin(), hosts->end()});
}

std::vector<std::string> HostsInNcclPrefixes(std::string_view text) {
  // NCCL's prefix is "%s:%d:%d [%d] " (host:pid:tid [cuda device]), optionally followed by
  // the source file:line of a WARN; RCCL writes the same.
  static const RE2 kPrefix(R"(([A-Za-z0-9][A-Za-z0-9._-]*):\d+:\d+ \[\d+\] (?:\S+:\d+ )?[NR]CCL (?:INFO|WARN))");
  std::set<std::string> hosts;
  re2::StringPiece in(text.data(), text.size());
  std::string host;
  while (RE2::FindAndConsume(&in, kPrefix, &host)) {
    // All digits is a time stamp's "12:34:56 [0]", not a host.
    if (host.find_first_not_of("0123456789") == std::string::npos) continue;
    hosts.insert(host);
    if (hosts.size() >= 100000) break;
  }
  return Sorted(std::move(hosts));
}

JobHosts FindJobHosts(const JobFiles& job, SchedulerAnswer& scheduler) {
  std::string text = Head(job.log);
  if (!job.err_log.empty()) text += Head(job.err_log);
  if (auto hosts = NodelistInText(text); !hosts.empty()) return {hosts, "job log: its Slurm node list"};
  if (const SchedulerJob& s = scheduler.Get(); !s.hosts.empty()) return {Sorted({s.hosts.begin(), s.hosts.end()}), s.source};
  if (auto hosts = HostsInNcclPrefixes(text); !hosts.empty()) return {hosts, "job log: host names of its NCCL/RCCL lines"};
  return {};
}

}  // namespace mt::tools
