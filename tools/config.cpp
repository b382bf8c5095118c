#include "tools/config.h"

#include <yaml-cpp/yaml.h>

#include <stdexcept>

namespace mt::tools {

namespace {

std::vector<std::string> StringList(const YAML::Node& n, const std::string& what) {
  std::vector<std::string> out;
  if (!n) return out;
  if (!n.IsSequence()) throw std::runtime_error(what + " must be a list");
  for (const auto& item : n) out.push_back(item.as<std::string>());
  return out;
}

bool IsHex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

Config LoadConfigFile(const std::filesystem::path& path) {
  Config c;
  c.source = path;
  YAML::Node root;
  try {
    root = YAML::LoadFile(path.string());
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path.string() + ": " + e.what());
  }
  if (root.IsNull()) return c;
  if (!root.IsMap()) throw std::runtime_error(path.string() + ": the top level must be a mapping");
  try {
    if (auto w = root["workspace"]) c.workspace = w.as<std::string>();
    if (auto http = root["http"]) {
      c.allowed_origins = StringList(http["allowed_origins"], "http.allowed_origins");
      c.allowed_hosts = StringList(http["allowed_hosts"], "http.allowed_hosts");
      if (auto m = http["max_body_bytes"]) c.max_body_bytes = m.as<size_t>();
    }
    if (auto tokens = root["tokens"]) {
      if (!tokens.IsSequence()) throw std::runtime_error("tokens must be a list");
      for (const auto& t : tokens) {
        TokenEntry e{t["name"].as<std::string>(""), t["sha256"].as<std::string>(""), t["role"].as<std::string>("agent")};
        if (e.name.empty()) throw std::runtime_error("every token needs a name");
        if (!IsHex64(e.sha256_hex))
          throw std::runtime_error("token " + e.name + ": sha256 must be 64 hex digits (the SHA-256 of the secret)");
        if (e.role != "agent" && e.role != "approver" && e.role != "ci")
          throw std::runtime_error("token " + e.name + ": role must be agent, approver or ci");
        for (auto& ch : e.sha256_hex) ch = char(std::tolower(static_cast<unsigned char>(ch)));
        c.tokens.push_back(std::move(e));
      }
    }
    if (auto a = root["approvals"]) {
      if (!a.IsMap()) throw std::runtime_error("approvals must be a mapping");
      if (auto r = a["stdio_role"]) c.stdio_role = r.as<std::string>();
      if (c.stdio_role != "agent" && c.stdio_role != "approver" && c.stdio_role != "ci")
        throw std::runtime_error("approvals.stdio_role must be agent, approver or ci");
      if (auto d = a["dir"]) c.approvals_dir = d.as<std::string>();
      if (auto l = a["audit_log"]) c.audit_log = l.as<std::string>();
      if (auto t = a["ttl_minutes"]) c.approval_ttl_minutes = t.as<int>();
      if (c.approval_ttl_minutes < 1 || c.approval_ttl_minutes > 24 * 60)
        throw std::runtime_error("approvals.ttl_minutes must be 1..1440");
      if (auto k = a["state_key_file"]) c.state_key_file = k.as<std::string>();
      if (auto b = a["in_band"]) c.approval_in_band = b.as<bool>();
    }
    c.policy = launch::approval::PolicyFromYaml(root["policy"]);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path.string() + ": " + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path.string() + ": " + e.what());
  }
  // A relative workspace is relative to the directory that holds the config's configs/.
  if (c.workspace.is_relative()) {
    auto base = std::filesystem::absolute(path).parent_path();
    if (base.filename() == "configs") base = base.parent_path();
    c.workspace = base / c.workspace;
  }
  for (auto* p : {&c.approvals_dir, &c.audit_log, &c.state_key_file}) {
    if (p->empty() || p->is_absolute()) continue;
    auto base = std::filesystem::absolute(path).parent_path();
    if (base.filename() == "configs") base = base.parent_path();
    *p = base / *p;
  }
  return c;
}

Config ResolveConfig(const std::optional<std::string>& config_flag, const std::optional<std::string>& workspace_flag) {
  Config c;
  if (config_flag) {
    c = LoadConfigFile(*config_flag);
  } else if (std::filesystem::exists("configs/mt.yaml")) {
    c = LoadConfigFile("configs/mt.yaml");
  }
  if (workspace_flag) c.workspace = *workspace_flag;
  c.workspace = std::filesystem::absolute(c.workspace).lexically_normal();
  return c;
}

}  // namespace mt::tools
