// mt's configuration: configs/mt.yaml (or --config FILE) overridden by command-line flags.
// The workspace resolves as: --workspace flag, else the file's `workspace:`, else ./outputs.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

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
};

// Loads `path` (a YAML file). Throws std::runtime_error naming the file and the problem.
Config LoadConfigFile(const std::filesystem::path& path);

// The config a command runs with: explicit --config FILE, else configs/mt.yaml in the
// current directory when present, else defaults; then --workspace overrides.
Config ResolveConfig(const std::optional<std::string>& config_flag,
                     const std::optional<std::string>& workspace_flag);

}  // namespace mt::tools
