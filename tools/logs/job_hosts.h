// A job's hosts when mt did not launch it, for narrowing a shared metrics store to the job:
// the Slurm node list the job's own output prints (SLURM_JOB_NODELIST=…), else what the
// scheduler says (installed by the CLI and the server: scontrol show job / sacct), else the
// host names NCCL and RCCL put in front of their lines ("node7:4242:4250 [0] NCCL INFO …",
// also behind mpirun's "[1,4]<stdout>:" prefix). `found_by` says which, for the answer.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/logs/workspace.h"

namespace mt::tools {

struct JobHosts {
  std::vector<std::string> hosts;   // sorted, unique
  std::string found_by;             // "" when nothing named them
};

// The scheduler's view of a job: its nodes and when it ran (`source` e.g. "slurm: scontrol
// show job"); installed by the CLI and the server, none by default.
struct SchedulerJob {
  std::vector<std::string> hosts;
  std::optional<double> start, end;   // Unix seconds; no end while it runs
  std::string source;
};
using Scheduler = std::function<SchedulerJob(const std::string& job_id)>;
void SetScheduler(Scheduler scheduler);
// What the installed scheduler says of one job, asked at most once (an ask may take seconds:
// scontrol, then sacct, each bounded): nothing without a scheduler or for a job without an id.
class SchedulerAnswer {
 public:
  explicit SchedulerAnswer(const JobFiles& job) : job_(job) {}
  const SchedulerJob& Get();

 private:
  const JobFiles& job_;
  std::optional<SchedulerJob> answer_;
};

// Reads at most the first 4 MiB of the job's log (and its separate stderr), confined to the
// log's directory; never throws for a missing or unreadable log (no hosts, then). The
// scheduler is asked only when the log names no node list.
JobHosts FindJobHosts(const JobFiles& job, SchedulerAnswer& scheduler);

// The parts, for tests: a `SLURM_JOB_NODELIST=`/`SLURM_NODELIST=`/`JOB_NODELIST=` value
// expanded, and the NCCL/RCCL line prefixes' host names, in a text.
std::vector<std::string> NodelistInText(std::string_view text);
std::vector<std::string> HostsInNcclPrefixes(std::string_view text);

}  // namespace mt::tools
