// Approval policy: rules, keyed on the caller's role, under which a plan is approved
// without a human (CI). Evaluated server-side on the plan the server built, never on
// anything the client claims. A role without a rule gets no automatic approval.
//
// configs/mt.yaml:
//   policy:
//     ci:
//       backends: [slurm]            # allowed backends (empty/absent: any)
//       max_nodes: 8
//       max_steps: 50                # the plan's resolved `steps` (config + passthrough)
//       partitions: [ci]             # sbatch -p/--partition must be one of these (required)
//       settings:                    # key=value the run must have, from passthrough or config
//         dataset_type: [synthetic]
//       scheduler_args: [--partition, -p, --time, -t]   # the only sbatch options allowed
//       cancel: false                # may cancel (its workspace's) jobs without a human
//       env: [XLA_FLAGS, NCCL_DEBUG]  # _env_ keys this role may pass (absent: the launcher's
//                                     # allow-list; patterns ending in * are prefixes)
//     supervisor:                    # mt watch's restarts (a restart plan adds --exclude=…
//       partitions: [ci]             # when it keeps hosts off: allow it in scheduler_args)
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "launcher/launch/plan.h"

namespace mt::launch::approval {

struct RoleRule {
  std::string role;
  std::vector<std::string> backends;
  std::optional<int> max_nodes, max_steps;
  std::vector<std::string> partitions;
  std::map<std::string, std::vector<std::string>> settings;
  std::vector<std::string> scheduler_args = {"--partition", "-p", "--time", "-t"};
  bool cancel = false;
  std::optional<std::vector<std::string>> env;   // narrows launch::DefaultEnvAllowList()
};

struct Policy {
  std::vector<RoleRule> rules;
  const RoleRule* Find(const std::string& role) const;
};

struct PolicyDecision {
  bool allowed = false;
  std::string rule;                   // "policy.<role>", or "" when no rule applies
  std::vector<std::string> reasons;   // why not (each a sentence), empty when allowed
  std::string Explain() const;        // "allowed by policy.ci" / "refused by policy.ci: …"
};

// Parses the `policy:` mapping. Throws std::runtime_error naming the bad key.
Policy PolicyFromYaml(const YAML::Node& node);

// Whether `role` may run `plan` without a human, and if not, every reason.
PolicyDecision EvaluatePolicy(const Policy& policy, const std::string& role, const Plan& plan);

// Whether `role` may cancel a job of this workspace without a human.
PolicyDecision EvaluateCancelPolicy(const Policy& policy, const std::string& role);

// The value of key `key` the run will use: the last `key=value` passthrough override, else
// the plan's resolved model settings, else the model environment; nullopt when unset.
std::optional<std::string> EffectiveSetting(const Plan& plan, const std::string& key);

}  // namespace mt::launch::approval
