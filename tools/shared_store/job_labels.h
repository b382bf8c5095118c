// A job as the GPU exporters themselves label it. dcgm-exporter's HPC job mapping
// (--hpc-job-mapping-dir: a Slurm prolog writes the job id into a file per GPU) adds
// `hpc_job="<id>"` to that GPU's series while the job runs; AMD device-metrics-exporter's
// Slurm integration adds `job_id="<id>"`. On a shared store those labels place a job whose
// log names no hosts and carries no time stamps, without asking the scheduler.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tools/tsdb/prometheus_client.h"
#include "tools/tsdb/tsdb_context.h"

namespace mt::tools {

// The selector of a job's GPU series, both exporters' labels; "" for an id that is not a
// Slurm job id (digits, `_`, `.`, `-`, letters), which no label could hold safely.
std::string JobLabelSelector(const std::string& job_id);

// The store's hosts whose GPU series carry the job's id in `ctx`'s window (every host the
// store has, not only a restricted set). Empty when none do.
std::vector<std::string> HostsFromJobLabels(TsdbContext& ctx, const std::string& job_id);

// When the job's labelled samples begin and end, searched over the `lookback_s` seconds
// before `until`: in steps of 5 minutes (or lookback/10,000) first, then at one second in
// the first and the last step that holds one. Samples of series gone stale since (the job
// ended) count. nullopt when no sample carries the id there.
std::optional<TsdbWindow> WindowFromJobLabels(const PrometheusClient& store, const std::string& job_id, double until,
                                              double lookback_s);

}  // namespace mt::tools
