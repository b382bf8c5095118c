#include "launcher/launch/model_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>

namespace mt::launch {
namespace fs = std::filesystem;
using base::Errc;
using base::Status;

Status ParseModelSpec(const std::string& text, ModelSpec* out) {
  *out = {};
  const auto colons = std::count(text.begin(), text.end(), ':');
  if (colons >= 3) return Status(Errc::kInvalid, "model spec '" + text + "' has " + std::to_string(colons) + " colons; use model[[:alias]:tag]");
  std::string rest = text;
  if (colons >= 1) {
    const auto p = rest.rfind(':');
    out->tag = rest.substr(p + 1);
    rest = rest.substr(0, p);
  }
  if (colons == 2) {
    const auto p = rest.rfind(':');
    out->alias = rest.substr(p + 1);
    rest = rest.substr(0, p);
  }
  out->model = rest;
  if (out->model.empty()) return Status(Errc::kInvalid, "model spec '" + text + "' has no model name");
  for (const std::string* part : {&out->model, &out->alias, &out->tag})
    for (char c : *part)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
        return Status(Errc::kInvalid, "model spec '" + text + "' may only contain letters, digits, '-', '_' and '.'");
  return Status::Ok();
}

std::vector<std::string> ListModels(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const auto p = e.path();
    if (p.extension() == ".yml" && e.is_regular_file()) names.push_back(p.stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

static std::string JoinNames(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& n : v) s += (s.empty() ? "" : ", ") + n;
  return s;
}

bool ResolveModelName(const fs::path& dir, const std::string& name, std::string* resolved, std::string* error) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return *error = "model config directory " + dir.string() + " does not exist", false;
  const auto all = ListModels(dir);
  if (std::find(all.begin(), all.end(), name) != all.end()) return *resolved = name, true;
  std::vector<std::string> hits;
  for (const auto& n : all)
    if (n.find(name) != std::string::npos) hits.push_back(n);
  if (hits.size() == 1) return *resolved = hits[0], true;
  if (hits.empty())
    *error = "unknown model '" + name + "'. Supported models: " + JoinNames(all);
  else
    *error = "ambiguous model '" + name + "' matches " + std::to_string(hits.size()) + " configs: " + JoinNames(hits) +
             ". Use a longer name.";
  return false;
}

static Status LoadEnvFile(const fs::path& file, std::map<std::string, std::string>* env) {
  std::ifstream in(file);
  if (!in) return Status(Errc::kNotFound, file.string() + ": cannot read");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("export ", 0) == 0) line = line.substr(7);
    const auto eq = line.find('=');
    const std::string key = eq == std::string::npos ? "" : line.substr(0, eq);
    bool ok = !key.empty() && !std::isdigit(static_cast<unsigned char>(key[0]));
    for (char c : key) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ok) return Status(Errc::kInvalid, file.string() + ":" + std::to_string(n) + ": expected KEY=VALUE");
    (*env)[key] = line.substr(eq + 1);
  }
  return Status::Ok();
}

Status LoadModelConfig(const fs::path& dir, const std::string& name, ModelConfig* out) {
  *out = {};
  out->name = name;
  out->file = dir / (name + ".yml");
  static const std::set<std::string> kKeys = {"description", "parallelism", "per_device_batch_size", "max_target_length",
                                              "steps", "gpus_per_node", "tgs_band", "moe", "train_command"};
  // Every problem names the file: "configs/models/x.yml: unknown key 'stepz'".
  auto bad = [&](const std::string& what) { return Status(Errc::kInvalid, out->file.string() + ": " + what); };
  try {
    YAML::Node y = YAML::LoadFile(out->file.string());
    if (!y.IsMap()) return bad("expected a mapping");
    for (const auto& kv : y) {
      const auto key = kv.first.as<std::string>();
      if (!kKeys.count(key)) return bad("unknown key '" + key + "'");
    }
    out->description = y["description"].as<std::string>("");
    if (y["parallelism"]) {
      if (!y["parallelism"].IsMap()) return bad("parallelism must be a mapping");
      for (const auto& kv : y["parallelism"]) out->parallelism[kv.first.as<std::string>()] = kv.second.as<std::string>();
    }
    out->per_device_batch_size = y["per_device_batch_size"].as<int>(1);
    out->max_target_length = y["max_target_length"].as<int>(4096);
    out->steps = y["steps"].as<int>(50);
    out->gpus_per_node = y["gpus_per_node"].as<int>(8);
    out->moe = y["moe"].as<bool>(false);
    if (y["tgs_band"]) {
      if (!y["tgs_band"].IsSequence() || y["tgs_band"].size() != 2) return bad("tgs_band must be [low, high]");
      out->tgs_low = y["tgs_band"][0].as<double>();
      out->tgs_high = y["tgs_band"][1].as<double>();
      if (out->tgs_low <= 0 || out->tgs_high < out->tgs_low) return bad("tgs_band must be 0 < low <= high");
    }
    if (y["train_command"]) {
      if (!y["train_command"].IsSequence()) return bad("train_command must be a list (an argv)");
      for (const auto& a : y["train_command"]) out->train_command.push_back(a.as<std::string>());
    }
    if (out->per_device_batch_size < 1 || out->max_target_length < 1 || out->steps < 1 || out->gpus_per_node < 1)
      return bad("per_device_batch_size, max_target_length, steps and gpus_per_node must be >= 1");
  } catch (const YAML::Exception& e) {
    return bad(e.what());
  }
  const fs::path env = dir / (name + ".env");
  std::error_code ec;
  if (fs::exists(env, ec)) {
    out->env_file = env;
    if (Status st = LoadEnvFile(env, &out->env); !st.ok()) return st;
  }
  return Status::Ok();
}

fs::path DefaultModelsDir() {
  if (const char* v = std::getenv("MT_MODELS_DIR"); v && *v) return v;
  std::error_code ec;
  if (fs::is_directory("configs/models", ec)) return fs::absolute("configs/models");
  return fs::path(MT_SOURCE_DIR) / "configs" / "models";
}

}  // namespace mt::launch
