#include "tools/gate/sweep_spec.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace mt::tools {

namespace {

[[noreturn]] void Fail(const std::string& where, const std::string& what) { throw std::runtime_error(where + ": " + what); }

std::vector<std::string> Strings(const YAML::Node& n, const std::string& where, const std::string& key) {
  if (!n.IsSequence()) Fail(where, "'" + key + "' must be a list of strings");
  std::vector<std::string> out;
  for (const auto& item : n) {
    if (!item.IsScalar()) Fail(where, "'" + key + "' must be a list of strings");
    out.push_back(item.as<std::string>());
  }
  return out;
}

template <typename T>
T Number(const YAML::Node& n, const std::string& where, const std::string& key) {
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    Fail(where, "'" + key + "' must be a number");
  }
}

}  // namespace

SweepSpec ParseSweepSpec(const std::string& yaml_text, const std::string& where) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    Fail(where, "not valid YAML: " + e.msg + " (line " + std::to_string(e.mark.line + 1) + ")");
  }
  if (!root.IsMap()) Fail(where, "a sweep spec is a YAML mapping with at least 'runs'");
  static const std::set<std::string> known = {"name", "backend", "scheduler", "passthrough", "threshold_pct",
                                              "warmup_steps", "timeout_s", "runs"};
  for (const auto& kv : root)
    if (!known.count(kv.first.as<std::string>())) Fail(where, "unknown key '" + kv.first.as<std::string>() + "'");

  SweepSpec spec;
  if (root["name"]) spec.name = root["name"].as<std::string>();
  for (char c : spec.name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      Fail(where, "'name' may hold only letters, digits, '-', '_' and '.' (it becomes part of job names)");
  if (spec.name.empty() || spec.name.size() > 40) Fail(where, "'name' must be 1-40 characters");
  if (root["backend"]) spec.backend = root["backend"].as<std::string>();
  if (spec.backend != "slurm" && spec.backend != "local")
    Fail(where, "'backend' must be slurm or local, got '" + spec.backend + "'");
  if (root["scheduler"]) spec.scheduler_args = Strings(root["scheduler"], where, "scheduler");
  if (root["passthrough"]) spec.passthrough = Strings(root["passthrough"], where, "passthrough");
  if (root["threshold_pct"]) spec.threshold_pct = Number<double>(root["threshold_pct"], where, "threshold_pct");
  if (!(spec.threshold_pct > 0 && spec.threshold_pct < 100)) Fail(where, "'threshold_pct' must be between 0 and 100");
  if (root["warmup_steps"]) spec.warmup_steps = Number<int>(root["warmup_steps"], where, "warmup_steps");
  if (spec.warmup_steps < 0 || spec.warmup_steps > 100000) Fail(where, "'warmup_steps' must be 0 or more");
  if (root["timeout_s"]) spec.timeout_s = Number<int>(root["timeout_s"], where, "timeout_s");
  if (spec.timeout_s < 1) Fail(where, "'timeout_s' must be a positive number of seconds");

  YAML::Node runs = root["runs"];
  if (!runs || !runs.IsSequence() || runs.size() == 0) Fail(where, "'runs' must be a non-empty list of {model, nodes}");
  std::set<std::pair<std::string, int>> seen;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string at = where + ": runs[" + std::to_string(i) + "]";
    const YAML::Node r = runs[i];
    if (!r.IsMap() || !r["model"] || !r["model"].IsScalar()) throw std::runtime_error(at + ": needs 'model'");
    for (const auto& kv : r) {
      std::string k = kv.first.as<std::string>();
      if (k != "model" && k != "nodes" && k != "passthrough") throw std::runtime_error(at + ": unknown key '" + k + "'");
    }
    SweepRun run;
    run.model = r["model"].as<std::string>();
    if (run.model.empty()) throw std::runtime_error(at + ": 'model' is empty");
    if (!r["nodes"]) {
      run.nodes = {1};
    } else if (r["nodes"].IsScalar()) {
      run.nodes = {Number<int>(r["nodes"], at, "nodes")};
    } else if (r["nodes"].IsSequence()) {
      for (const auto& n : r["nodes"]) run.nodes.push_back(Number<int>(n, at, "nodes"));
    } else {
      throw std::runtime_error(at + ": 'nodes' must be a number or a list of numbers");
    }
    for (int n : run.nodes) {
      if (n < 1 || n > 100000) throw std::runtime_error(at + ": node count " + std::to_string(n) + " is not positive");
      if (!seen.insert({run.model, n}).second)
        throw std::runtime_error(at + ": " + run.model + " on " + std::to_string(n) + " nodes appears twice");
    }
    if (r["passthrough"]) run.passthrough = Strings(r["passthrough"], at, "passthrough");
    spec.runs.push_back(std::move(run));
  }
  return spec;
}

SweepSpec LoadSweepSpec(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file.string() + ": cannot read the sweep spec");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseSweepSpec(text.str(), file.string());
}

}  // namespace mt::tools
