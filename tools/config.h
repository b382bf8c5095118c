// mt's configuration: configs/mt.yaml (or --config FILE) overridden by command-line flags.
// The workspace resolves as: --workspace flag, else the file's `workspace:`, else ./outputs.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "launcher/approval/policy.h"

namespace mt::tools {

// An HTTP bearer token, stored only as the hex SHA-256 of the secret.
struct TokenEntry {
  std::string name;
  std::string sha256_hex;
  std::string role;   // agent | approver | ci
};

struct Config {
  std::filesystem::path workspace = "outputs";
  std::vector<TokenEntry> tokens;
  std::vector<std::string> allowed_origins;    // besides loopback origins
  std::vector<std::string> allowed_hosts;      // besides loopback host names
  std::size_t max_body_bytes = 4 * 1024 * 1024;
  std::filesystem::path source;                // the file it came from, if any

  // The approval gate (docs/approvals.md). Empty paths default under the workspace:
  // <workspace>/.mt/approvals/ and <workspace>/.mt/audit.jsonl.
  std::string stdio_role = "agent";            // the role of a stdio client: agent | approver | ci
  std::filesystem::path approvals_dir, audit_log;
  int approval_ttl_minutes = 15;
  bool approval_in_band = true;                // clients may show the plan to their user (elicitation)
  std::filesystem::path state_key_file;        // requestState HMAC key (32+ bytes); empty = random per process
  launch::approval::Policy policy;

  std::filesystem::path ApprovalsDir() const { return approvals_dir.empty() ? workspace / ".mt" / "approvals" : approvals_dir; }
  std::filesystem::path AuditLogPath() const { return audit_log.empty() ? workspace / ".mt" / "audit.jsonl" : audit_log; }
};

// Loads `path` (a YAML file). Throws std::runtime_error naming the file and the problem.
Config LoadConfigFile(const std::filesystem::path& path);

// The config a command runs with: explicit --config FILE, else configs/mt.yaml in the
// current directory when present, else defaults; then --workspace overrides.
Config ResolveConfig(const std::optional<std::string>& config_flag,
                     const std::optional<std::string>& workspace_flag);

}  // namespace mt::tools
