// A job on a site's shared metrics store (a Prometheus-compatible endpoint of mt.yaml's
// metrics.sources): the store knows nothing of jobs, so where the job sits on it comes from
// the job's own files and the scheduler. Its time window, its hosts among the store's, and
// the wall time of its training steps (a shared store holds no tb_step), each with where it
// came from, so that answers can say so.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tools/logs/job_hosts.h"
#include "tools/logs/workspace.h"
#include "tools/tsdb/query_answer.h"
#include "tools/tsdb/tsdb_context.h"

namespace mt::tools {

// The job's window: start and end when both are given, else the span of the job's log (its
// first and last time-stamped lines; a given start or end overrides its side), else when the
// scheduler ran it (to now while it runs), else when the store's GPU series carried the
// job's id (job_labels.h: dcgm-exporter's hpc_job, AMD's job_id; searched back 30 days
// from `at` or now), else the hour before `at`. `from` says which: "arguments", "job log",
// "scheduler", "exporter labels". nullopt when nothing places the job in time.
std::optional<TsdbWindow> StoreWindow(const JobFiles& job, std::optional<double> start, std::optional<double> end,
                                      std::optional<double> at, SchedulerAnswer& scheduler, const PrometheusClient& store,
                                      std::string* from);

// A store host's name as a job's node list writes it: "gpu-node-01.cluster.local" →
// "gpu-node-01"; addresses stay whole.
std::string ShortHostName(const std::string& host);

// The job's own nodes among the store's hosts (its log's Slurm node list or NCCL prefixes,
// else the scheduler, matched by short name; else the hosts whose GPU series carry the
// job's id, job_labels.h).
struct JobHostsOnStore {
  std::vector<std::string> found;   // the store's names of the job's nodes
  std::string found_by;             // "" when the job names no nodes
  std::string note;                 // for the answer
};
JobHostsOnStore MatchJobHosts(const JobFiles& job, SchedulerAnswer& scheduler, TsdbContext& store);
// Writes them into a query_tsdb answer (hosts, hosts_total, tsdb.hosts_source, the note).
void ApplyJobHosts(const JobHostsOnStore& hosts, QueryAnswer* out);

// Places the job's steps on the store's time axis from its log (tools/logs/step_clock.h).
// Unstamped step lines are anchored at the job's start: the scheduler's, else the log's
// first time stamp, else the window's start (taken as the job's); adds a note saying how.
// Nothing when the log has no steps.
void SetStepClockFromLog(const JobFiles& job, const TsdbWindow& window, const std::string& window_from,
                         SchedulerAnswer& scheduler, TsdbContext& store, std::vector<std::string>* notes);

}  // namespace mt::tools
