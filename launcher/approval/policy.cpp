#include "launcher/approval/policy.h"

#include "launcher/launch/env_policy.h"

#include <algorithm>
#include <stdexcept>

namespace mt::launch::approval {

namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::vector<std::string> Strings(const YAML::Node& n, const std::string& what) {
  std::vector<std::string> out;
  if (!n) return out;
  if (!n.IsSequence()) throw std::runtime_error(what + " must be a list");
  for (const auto& x : n) out.push_back(x.as<std::string>());
  return out;
}

// sbatch options as (name, value) pairs: --name=value, --name value, -x value, -xvalue.
// Anything not option-shaped is reported with an empty name.
std::vector<std::pair<std::string, std::string>> SchedulerOptions(const std::vector<std::string>& args) {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) == 0) {
      const auto eq = a.find('=');
      if (eq != std::string::npos) out.emplace_back(a.substr(0, eq), a.substr(eq + 1));
      else if (i + 1 < args.size() && args[i + 1].rfind("-", 0) != 0) out.emplace_back(a, args[++i]);
      else out.emplace_back(a, "");
    } else if (a.size() >= 2 && a[0] == '-') {
      if (a.size() > 2) out.emplace_back(a.substr(0, 2), a.substr(2));
      else if (i + 1 < args.size()) out.emplace_back(a, args[++i]);
      else out.emplace_back(a, "");
    } else {
      out.emplace_back("", a);
    }
  }
  return out;
}

}  // namespace

const RoleRule* Policy::Find(const std::string& role) const {
  for (const auto& r : rules)
    if (r.role == role) return &r;
  return nullptr;
}

std::string PolicyDecision::Explain() const {
  if (rule.empty()) return reasons.empty() ? "no policy applies" : reasons.front();
  if (allowed) return "allowed by " + rule;
  std::string s = "refused by " + rule + ":";
  for (const auto& r : reasons) s += " " + r;
  return s;
}

Policy PolicyFromYaml(const YAML::Node& node) {
  Policy p;
  if (!node || node.IsNull()) return p;
  if (!node.IsMap()) throw std::runtime_error("policy must be a mapping of role → rule");
  for (const auto& kv : node) {
    RoleRule r;
    r.role = kv.first.as<std::string>();
    const std::string where = "policy." + r.role;
    // supervisor: `mt watch` restarting a job it watches (tools/gate/restart_request.h).
    if (r.role != "agent" && r.role != "approver" && r.role != "ci" && r.role != "supervisor")
      throw std::runtime_error(where + ": role must be agent, approver, ci or supervisor");
    const YAML::Node& n = kv.second;
    if (!n.IsMap()) throw std::runtime_error(where + " must be a mapping");
    for (const auto& f : n) {
      const std::string key = f.first.as<std::string>();
      if (key != "backends" && key != "max_nodes" && key != "max_steps" && key != "partitions" && key != "settings" &&
          key != "scheduler_args" && key != "cancel" && key != "env")
        throw std::runtime_error(where + ": unknown key '" + key + "'");
    }
    r.backends = Strings(n["backends"], where + ".backends");
    if (n["max_nodes"]) r.max_nodes = n["max_nodes"].as<int>();
    if (n["max_steps"]) r.max_steps = n["max_steps"].as<int>();
    r.partitions = Strings(n["partitions"], where + ".partitions");
    if (n["scheduler_args"]) r.scheduler_args = Strings(n["scheduler_args"], where + ".scheduler_args");
    if (const auto s = n["settings"]) {
      if (!s.IsMap()) throw std::runtime_error(where + ".settings must be a mapping of key → allowed values");
      for (const auto& kv2 : s) {
        const std::string k = kv2.first.as<std::string>();
        r.settings[k] = kv2.second.IsSequence() ? Strings(kv2.second, where + ".settings." + k)
                                                : std::vector<std::string>{kv2.second.as<std::string>()};
      }
    }
    if (n["cancel"]) r.cancel = n["cancel"].as<bool>();
    if (n["env"]) r.env = Strings(n["env"], where + ".env");
    p.rules.push_back(std::move(r));
  }
  return p;
}

std::optional<std::string> EffectiveSetting(const Plan& plan, const std::string& key) {
  std::optional<std::string> v;
  if (auto it = plan.model.find(key); it != plan.model.end()) v = it->second;
  else if (auto e = plan.env.find(key); e != plan.env.end()) v = e->second;
  for (const auto& o : plan.overrides) {
    const auto eq = o.find('=');
    if (eq != std::string::npos && o.compare(0, eq, key) == 0 && eq == key.size()) v = o.substr(eq + 1);
  }
  return v;
}

PolicyDecision EvaluatePolicy(const Policy& policy, const std::string& role, const Plan& plan) {
  PolicyDecision d;
  const RoleRule* r = policy.Find(role);
  if (!r) {
    d.reasons.push_back("no policy rule for role '" + role + "'; a human must approve");
    return d;
  }
  d.rule = "policy." + role;
  auto no = [&](std::string why) { d.reasons.push_back(std::move(why)); };
  if (!r->backends.empty() && !Contains(r->backends, plan.backend))
    no("backend " + plan.backend + " is not one of [" + Join(r->backends) + "].");
  if (r->max_nodes && plan.nodes > *r->max_nodes)
    no(std::to_string(plan.nodes) + " nodes exceeds max_nodes " + std::to_string(*r->max_nodes) + ".");
  if (r->max_steps) {
    const auto steps = EffectiveSetting(plan, "steps");
    long n = -1;
    try {
      n = steps ? std::stol(*steps) : -1;
    } catch (const std::exception&) {
      n = -1;
    }
    if (n < 0) no("steps is unknown; max_steps " + std::to_string(*r->max_steps) + " cannot be checked.");
    else if (n > *r->max_steps) no("steps=" + std::to_string(n) + " exceeds max_steps " + std::to_string(*r->max_steps) + ".");
  }
  for (const auto& [key, allowed] : r->settings) {
    const auto v = EffectiveSetting(plan, key);
    if (!v) no(key + " is unset; it must be one of [" + Join(allowed) + "] (pass " + key + "=…).");
    else if (!Contains(allowed, *v)) no(key + "=" + *v + " is not one of [" + Join(allowed) + "].");
  }
  if (r->env) {
    for (const auto& a : plan.passthrough) {
      if (a.rfind("_env_", 0) != 0) continue;
      const std::string key = a.substr(5, a.find('=') - 5);
      if (!launch::EnvKeyMatches(key, *r->env))
        no("environment variable " + key + " is not allowed for this role (allowed: [" + Join(*r->env) + "]).");
    }
  }
  std::string partition;
  for (const auto& [name, value] : SchedulerOptions(plan.scheduler_args)) {
    if (name.empty()) {
      no("scheduler argument '" + value + "' is not an option.");
      continue;
    }
    if (!Contains(r->scheduler_args, name)) {
      no("scheduler option " + name + " is not allowed (allowed: " + Join(r->scheduler_args) + ").");
      continue;
    }
    if (name == "-p" || name == "--partition") partition = value;
  }
  if (!r->partitions.empty() && plan.backend == "slurm") {
    if (partition.empty()) no("no partition given; pass -p one of [" + Join(r->partitions) + "].");
    else if (!Contains(r->partitions, partition)) no("partition " + partition + " is not one of [" + Join(r->partitions) + "].");
  }
  d.allowed = d.reasons.empty();
  return d;
}

PolicyDecision EvaluateCancelPolicy(const Policy& policy, const std::string& role) {
  PolicyDecision d;
  const RoleRule* r = policy.Find(role);
  if (!r) {
    d.reasons.push_back("no policy rule for role '" + role + "'; a human must approve");
    return d;
  }
  d.rule = "policy." + role;
  if (!r->cancel) d.reasons.push_back("cancel is not allowed (cancel: false).");
  d.allowed = d.reasons.empty();
  return d;
}

}  // namespace mt::launch::approval
