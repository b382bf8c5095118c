// mt's configuration: configs/mt.yaml (or --config FILE) overridden by command-line flags.
// The workspace resolves as: --workspace flag, else the file's `workspace:`, else ./outputs.
#pragma once
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "launcher/approval/policy.h"
#include "tools/gate/approval_gate.h"
#include "tools/supervise/notifier.h"
#include "tools/tsdb/metrics_source.h"

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
  // Per-connection limits of the HTTP server (mcp/http_guard.h; defaults there).
  int header_timeout_seconds = 10, body_timeout_seconds = 60, idle_timeout_seconds = 30;
  std::size_t max_connections_per_client = 64;
  std::filesystem::path source;                // the file it came from, if any

  // The approval gate (docs/approvals.md). Empty paths default under the workspace:
  // <workspace>/.mt/approvals/ and <workspace>/.mt/audit.jsonl.
  std::string stdio_role = "agent";            // the role of a stdio client: agent | approver | ci
  std::filesystem::path approvals_dir, audit_log;
  int approval_ttl_minutes = 15;
  InBandApproval approval_in_band = InBandApproval::kUrl;
  std::string approval_page_url;               // the /approvals page a stdio server links to (URL mode)
  int approval_url_wait_seconds = 45;          // URL mode: how long a call waits for the human (< client timeouts)
  std::size_t max_pending_per_requester = 20;  // pending plans one requester may have; 0 = no cap
  std::filesystem::path state_key_file;        // requestState HMAC key (32+ bytes); empty = random per process
  launch::approval::Policy policy;
  // Prometheus-compatible endpoints the cluster runs (`metrics.sources`), named by
  // query_tsdb's `source`; secrets only by reference (env or file).
  std::vector<MetricsSource> metrics_sources;
  // Where supervised runs post their notices (`notifications.webhooks`; URLs by reference).
  std::vector<Webhook> webhooks;

  std::filesystem::path ApprovalsDir() const { return approvals_dir.empty() ? workspace / ".mt" / "approvals" : approvals_dir; }
  std::filesystem::path AuditLogPath() const { return audit_log.empty() ? workspace / ".mt" / "audit.jsonl" : audit_log; }
};

// The approval environment a configuration implies (store, audit log, TTL, policy, caps).
ApprovalEnv ApprovalEnvFrom(const Config& config);

// Loads `path` (a YAML file). Throws std::runtime_error naming the file and the problem.
Config LoadConfigFile(const std::filesystem::path& path);

// Settings that widen what a principal may do without a human acting outside its client:
// a stdio role other than agent, and in-band approval in form mode. They are honoured only
// from a file the server's own user cannot change (an agent spawning `mt serve --config X`
// could otherwise grant itself the ci role or approve its own plans): owned by root or by
// another user, and neither the file nor its directory writable by group or others. Returns
// "" when `c` may be used, else the reason it may not (naming the file and the setting).
std::string CheckPrivilegedSettings(const Config& c);

// The config a command runs with: explicit --config FILE, else configs/mt.yaml in the
// current directory when present, else defaults; then --workspace overrides.
Config ResolveConfig(const std::optional<std::string>& config_flag,
                     const std::optional<std::string>& workspace_flag);

}  // namespace mt::tools
