#include "tools/catalog/config.h"
#include "tools/catalog/config_metrics.h"
#include "tools/catalog/config_notifications.h"

#include <yaml-cpp/yaml.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
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
      if (auto v = http["header_timeout_seconds"]) c.header_timeout_seconds = v.as<int>();
      if (auto v = http["body_timeout_seconds"]) c.body_timeout_seconds = v.as<int>();
      if (auto v = http["idle_timeout_seconds"]) c.idle_timeout_seconds = v.as<int>();
      if (auto v = http["max_connections_per_client"]) c.max_connections_per_client = v.as<size_t>();
      for (int t : {c.header_timeout_seconds, c.body_timeout_seconds, c.idle_timeout_seconds})
        if (t < 1 || t > 3600) throw std::runtime_error("http timeouts must be 1..3600 seconds");
      if (c.max_connections_per_client < 1) throw std::runtime_error("http.max_connections_per_client must be at least 1");
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
      if (auto b = a["in_band"]) {
        // `true` was the pre-URL-mode spelling; it now means the safe in-band mode.
        const std::string v = b.as<std::string>();
        if (v == "url" || v == "true") c.approval_in_band = InBandApproval::kUrl;
        else if (v == "form") c.approval_in_band = InBandApproval::kForm;
        else if (v == "off" || v == "false") c.approval_in_band = InBandApproval::kOff;
        else throw std::runtime_error("approvals.in_band must be url, form or off (got '" + v + "')");
      }
      if (auto u = a["page_url"]) c.approval_page_url = u.as<std::string>();
      if (!c.approval_page_url.empty() && c.approval_page_url.rfind("http://", 0) != 0 &&
          c.approval_page_url.rfind("https://", 0) != 0)
        throw std::runtime_error("approvals.page_url must be an http:// or https:// URL of mt serve's /approvals page");
      if (auto m = a["max_pending_per_requester"]) c.max_pending_per_requester = m.as<std::size_t>();
      if (auto w = a["url_wait_seconds"]) c.approval_url_wait_seconds = w.as<int>();
      if (c.approval_url_wait_seconds < 0 || c.approval_url_wait_seconds > 600)
        throw std::runtime_error("approvals.url_wait_seconds must be 0..600");
    }
    c.policy = launch::approval::PolicyFromYaml(root["policy"]);
    {
      auto base = std::filesystem::absolute(path).parent_path();
      if (base.filename() == "configs") base = base.parent_path();
      c.metrics_sources = MetricsSourcesFromYaml(root["metrics"], base);
      c.webhooks = WebhooksFromYaml(root["notifications"], base);
    }
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

namespace {

// "" when neither `p` nor (for the file) its directory can be changed by this process's
// user other than root-as-operator; else why not.
std::string OperatorOwned(const std::filesystem::path& p, const char* what) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return "cannot stat " + std::string(what) + " " + p.string();
  const uid_t me = ::geteuid();
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return std::string(what) + " " + p.string() + " is writable by group or others (mode " + mode + ")";
  if (me != 0 && st.st_uid == me)
    return std::string(what) + " " + p.string() + " is owned by the server's own user (uid " + std::to_string(me) +
           "), who could have written it";
  return "";
}

}  // namespace

std::string CheckPrivilegedSettings(const Config& c) {
  std::vector<std::string> privileged;
  if (c.stdio_role != "agent") privileged.push_back("approvals.stdio_role: " + c.stdio_role);
  if (c.approval_in_band == InBandApproval::kForm) privileged.push_back("approvals.in_band: form");
  if (privileged.empty()) return "";
  std::string settings;
  for (const auto& p : privileged) settings += (settings.empty() ? "" : ", ") + p;
  if (c.source.empty()) return settings + " can only come from a configuration file";
  const auto file = std::filesystem::absolute(c.source);
  std::string why = OperatorOwned(file, "the file");
  if (why.empty()) why = OperatorOwned(file.parent_path(), "its directory");
  if (why.empty()) return "";
  return file.string() + " sets " + settings + ", which only an operator-controlled file may set, but " + why +
         ". Put these settings in a file owned by root (or another user) and not writable by group or others, "
         "e.g. /etc/mt/mt.yaml (chown root:root, chmod 644), and pass it with --config.";
}

ApprovalEnv ApprovalEnvFrom(const Config& c) {
  ApprovalEnv e;
  e.workspace = c.workspace;
  e.approvals_dir = c.ApprovalsDir();
  e.audit_log = c.AuditLogPath();
  e.ttl = std::chrono::minutes(c.approval_ttl_minutes);
  e.policy = c.policy;
  e.max_pending_per_requester = c.max_pending_per_requester;
  return e;
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
