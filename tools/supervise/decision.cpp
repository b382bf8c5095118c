#include "tools/supervise/decision.h"

#include <algorithm>
#include <map>

namespace mt::tools {
namespace {

// Triage classes (tools/logs/triage_root_cause.cpp) by what a restart does for them.
const std::map<std::string, std::string>& Table() {
  static const std::map<std::string, std::string> table = {
      // transient on the cluster: a new allocation (without the culprit) fixes it
      {"hang", "restart"}, {"nccl_error", "restart"}, {"nccl_nic_fail", "restart"}, {"nic_error", "restart"},
      {"coordination_timeout", "restart"}, {"heartbeat", "restart"}, {"heartbeat_false_positive", "restart"},
      {"node_fail", "restart"}, {"gpu_hw_error", "restart"}, {"no_gpu", "restart"}, {"prolog_kill", "restart"},
      {"port_fail", "restart"}, {"preempted", "restart"}, {"time_limit", "restart"}, {"signal_kill", "restart"},
      {"checkpoint_fs_error", "restart"}, {"stage_timeout", "restart"},
      // the program or its configuration: the same code fails the same way
      {"oom", "stop"}, {"host_oom", "stop"}, {"python_exception", "stop"}, {"model_not_found", "stop"},
      {"patch_branch_fail", "stop"}, {"container_pull_fail", "stop"}, {"container_load_fail", "stop"},
      {"xla_compile_fail", "stop"}, {"subprocess_fail", "stop"}, {"actor_fail", "stop"}, {"stage_fail", "stop"},
      {"ray_start_fail", "stop"}, {"dmabuf_guard", "stop"},
      // a person or the job itself ended it
      {"cancelled", "stop"}, {"completed", "stop"},
      // nothing to act on
      {"running", "continue"}, {"tgs_degradation", "continue"},
  };
  return table;
}

bool SameFailure(const AttemptDiagnosis& a, const AttemptDiagnosis& b) {
  return a.cls == b.cls && a.last_step && b.last_step && *a.last_step == *b.last_step;
}

}  // namespace

std::string ActionForClass(const std::string& cls) {
  auto it = Table().find(cls);
  return it == Table().end() ? "" : it->second;
}

Decision Decide(const AttemptDiagnosis& latest, const std::vector<AttemptDiagnosis>& earlier, int restarts_made,
                const RestartPolicy& policy) {
  Decision d;
  const std::string action = ActionForClass(latest.cls);
  if (latest.status == "running" && latest.cls != "hang") {
    d.action = "continue";
    d.reason = "job " + latest.job + " is running (" + latest.cls + ")";
    return d;
  }
  if (action.empty()) {
    d.action = "stop";
    d.reason = "class " + latest.cls + " is not one a restart is known to fix or not: a human decides";
    return d;
  }
  if (action != "restart") {
    d.action = action;
    d.reason = latest.cls == "completed" ? "job " + latest.job + " completed"
               : latest.cls == "cancelled" ? "job " + latest.job + " was cancelled by someone: restarting it would undo that"
               : action == "continue"    ? "job " + latest.job + ": " + latest.cls + " needs no restart"
                                         : latest.cls + " is the program's or its configuration's: a restart fails the same way";
    return d;
  }
  for (const auto& e : earlier)
    if (SameFailure(e, latest)) {
      d.action = "stop";
      d.reason = latest.cls + " at step " + std::to_string(*latest.last_step) + " again (job " + e.job + " failed the same way): " +
                 "the program's, not the cluster's";
      return d;
    }
  if (restarts_made >= policy.max_restarts) {
    d.action = "stop";
    d.reason = latest.cls + ", but the chain has used its " + std::to_string(policy.max_restarts) + " restarts";
    return d;
  }
  d.action = "restart";
  d.resume_step = latest.checkpoint_step;
  std::vector<std::string> hosts = latest.culprits;
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  if (static_cast<int>(hosts.size()) <= policy.max_excluded) d.exclude = hosts;
  d.reason = latest.cls + " is transient on the cluster: restart" +
             (d.resume_step ? " from the checkpoint of step " + std::to_string(*d.resume_step) : " from the start (no checkpoint)") +
             (d.exclude.empty() ? (hosts.empty() ? "" : ", excluding none (" + std::to_string(hosts.size()) +
                                                            " hosts blamed: the fabric, not a node)")
                                : ", excluding " + std::to_string(d.exclude.size()) + " host(s)");
  return d;
}

}  // namespace mt::tools
