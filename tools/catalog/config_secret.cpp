#include "tools/catalog/config_secret.h"

#include <stdexcept>

namespace mt::tools {

std::filesystem::path PathIn(const YAML::Node& n, const std::filesystem::path& base) {
  if (!n) return {};
  std::filesystem::path p = n.as<std::string>();
  return p.is_relative() ? base / p : p;
}

// `{env: NAME}`, `{file: PATH}` or `{value: TEXT}`; a bare string is a value.
SecretRef SecretFrom(const YAML::Node& n, const std::filesystem::path& base, const std::string& what) {
  SecretRef r;
  if (!n) return r;
  if (n.IsScalar()) {
    r.value = n.as<std::string>();
    return r;
  }
  if (!n.IsMap()) throw std::runtime_error(what + " must be a mapping with env, file or value");
  for (const auto& kv : n) {
    const std::string k = kv.first.as<std::string>();
    if (k != "env" && k != "file" && k != "value") throw std::runtime_error(what + ": unknown key '" + k + "' (env, file or value)");
  }
  if (auto e = n["env"]) r.env = e.as<std::string>();
  r.file = PathIn(n["file"], base);
  if (auto v = n["value"]) r.value = v.as<std::string>();
  return r;
}

}  // namespace mt::tools
