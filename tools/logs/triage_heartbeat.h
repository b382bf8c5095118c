// The heartbeat checklist (job-log-triage): when the JAX coordination service says tasks
// "stopped sending heartbeats", were they really dead? A task that logs its own
// termination, or completed steps after the heartbeats supposedly stopped, was alive:
// the accusation is a false positive (a known gRPC-channel starvation in the service).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/logs/log_scanner.h"

namespace mt::tools {

struct AccusedTask {
  int task = 0;
  std::string host;                        // from JOB_NODELIST, one task per node
  bool logged_own_death = false;
  uint64_t own_death_line = 0;
  std::optional<int64_t> last_step;
  uint64_t last_step_line = 0;
  int64_t last_step_time = kNoTime;
  bool progress_after_stop = false;        // a step completed after heartbeat-stop time
  bool in_lockstep = false;                // its last step is the job's last step
};

struct HeartbeatAnalysis {
  LineRef report;                          // first "stopped sending heartbeats" line
  int reporters = 0;                       // lines carrying the accusation
  int64_t crash_time = kNoTime;
  std::optional<int64_t> timeout_seconds;
  std::string timeout_source;              // log | argument | unknown
  int64_t heartbeat_stop_time = kNoTime;   // crash - timeout
  std::vector<AccusedTask> accused;
  std::vector<int> neighbours;             // non-accused tasks next to accused ones
  std::vector<std::string> neighbour_hosts;
  bool false_positive = false;
  std::string reasoning;
};

// Hosts of a job's tasks (index = task id), from JOB_NODELIST / SLURM_JOB_NODELIST.
std::vector<std::string> TaskHosts(const LogScan& scan);

std::optional<HeartbeatAnalysis> AnalyzeHeartbeat(const LogScan& scan,
                                                  std::optional<int64_t> timeout_override);

}  // namespace mt::tools
