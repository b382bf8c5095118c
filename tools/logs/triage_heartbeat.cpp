#include "tools/logs/triage_heartbeat.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "tools/common/iso_time.h"
#include "tools/common/nodelist.h"

namespace mt::tools {

std::vector<std::string> TaskHosts(const LogScan& scan) {
  for (const char* key : {"JOB_NODELIST", "SLURM_JOB_NODELIST", "NODELIST_EXPANDED"}) {
    auto it = scan.header.find(key);
    if (it == scan.header.end()) continue;
    if (auto hosts = ExpandNodelist(it->second)) {
      // More tasks than nodes (one process per GPU): tasks fill nodes in order.
      int max_rank = scan.ranks.empty() ? -1 : scan.ranks.rbegin()->first;
      size_t per_node = 1;
      size_t ntasks = static_cast<size_t>(max_rank + 1);
      if (!hosts->empty() && ntasks > hosts->size() && ntasks % hosts->size() == 0) per_node = ntasks / hosts->size();
      if (per_node == 1) return *hosts;
      std::vector<std::string> tasks;
      for (const auto& h : *hosts)
        for (size_t i = 0; i < per_node; ++i) tasks.push_back(h);
      return tasks;
    }
  }
  return {};
}

std::optional<HeartbeatAnalysis> AnalyzeHeartbeat(const LogScan& scan,
                                                  std::optional<int64_t> timeout_override) {
  if (scan.heartbeats.empty()) return std::nullopt;
  HeartbeatAnalysis a;
  a.report = scan.heartbeats.front().ref;
  a.reporters = static_cast<int>(scan.heartbeats.size());
  std::set<int> accused;
  for (const auto& h : scan.heartbeats) accused.insert(h.tasks.begin(), h.tasks.end());
  // Crash time: the accusation's own time stamp, else the earliest self-reported death.
  a.crash_time = a.report.time;
  if (a.crash_time == kNoTime)
    for (const auto& [rank, r] : scan.ranks)
      if (r.own_death_time != kNoTime && (a.crash_time == kNoTime || r.own_death_time < a.crash_time))
        a.crash_time = r.own_death_time;
  if (timeout_override) {
    a.timeout_seconds = timeout_override;
    a.timeout_source = "argument";
  } else if (scan.heartbeat_timeout_seconds) {
    a.timeout_seconds = scan.heartbeat_timeout_seconds;
    a.timeout_source = "log";
  } else {
    a.timeout_source = "unknown";
  }
  if (a.crash_time != kNoTime && a.timeout_seconds) a.heartbeat_stop_time = a.crash_time - *a.timeout_seconds;

  int64_t job_last_step = -1;
  for (const auto& [rank, r] : scan.ranks) job_last_step = std::max(job_last_step, r.last_step);
  auto hosts = TaskHosts(scan);
  bool all_alive = !accused.empty();
  for (int t : accused) {
    AccusedTask at;
    at.task = t;
    if (t >= 0 && static_cast<size_t>(t) < hosts.size()) at.host = hosts[static_cast<size_t>(t)];
    auto it = scan.ranks.find(t);
    if (it != scan.ranks.end()) {
      const RankRecord& r = it->second;
      at.logged_own_death = r.own_death_line != 0;
      at.own_death_line = r.own_death_line;
      if (r.last_step >= 0) {
        at.last_step = r.last_step;
        at.last_step_line = r.last_step_line;
        at.last_step_time = r.last_step_time;
        at.in_lockstep = r.last_step == job_last_step;
      }
      at.progress_after_stop = a.heartbeat_stop_time != kNoTime && r.last_step_time != kNoTime &&
                               r.last_step_time > a.heartbeat_stop_time;
    }
    all_alive &= at.logged_own_death || at.progress_after_stop;
    a.accused.push_back(std::move(at));
  }
  // Neighbours: the nearest non-accused task on each side of every accused task.
  std::set<int> neigh;
  int max_task = scan.ranks.empty() ? -1 : scan.ranks.rbegin()->first;
  for (int t : accused) {
    for (int d : {-1, 1}) {
      int n = t + d;
      while (n >= 0 && n <= max_task && accused.count(n)) n += d;
      if (n >= 0 && n <= max_task) neigh.insert(n);
    }
  }
  for (int n : neigh) {
    a.neighbours.push_back(n);
    if (static_cast<size_t>(n) < hosts.size()) a.neighbour_hosts.push_back(hosts[static_cast<size_t>(n)]);
  }
  a.false_positive = all_alive;
  std::string why;
  for (const auto& at : a.accused) {
    if (!why.empty()) why += "; ";
    why += "task " + std::to_string(at.task);
    if (!at.host.empty()) why += " (" + at.host + ")";
    if (at.last_step) why += " completed step " + std::to_string(*at.last_step) + " at line " + std::to_string(at.last_step_line);
    if (at.logged_own_death) why += ", then logged its own termination at line " + std::to_string(at.own_death_line);
    if (at.progress_after_stop) why += ", after the heartbeat-stop time";
    if (!at.logged_own_death && !at.progress_after_stop) why += ", no sign of life after the heartbeats stopped";
  }
  if (accused.empty()) why = "the accusation lists no task ids";
  a.reasoning = (a.false_positive ? "accused tasks were alive: " : "not proven alive: ") + why;
  return a;
}

}  // namespace mt::tools
