// A small flag parser for the mt subcommands: `--name value`, `--name=value`, boolean
// `--name`, positionals, and `--` ending the flags. Unknown flags are usage errors.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mcp/json.h"

namespace mt::tools::cli {

class Flags {
 public:
  // `with_value`: flags that take a value (repeatable; value() returns the last);
  // `switches`: boolean flags.
  Flags(const std::vector<std::string>& args, std::set<std::string> with_value, std::set<std::string> switches);

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  std::optional<std::string> value(const std::string& name) const;
  std::vector<std::string> values(const std::string& name) const;
  bool has(const std::string& name) const { return switches_set_.count(name) > 0; }
  const std::vector<std::string>& positional() const { return positional_; }
  // Arguments after a literal `--`.
  const std::vector<std::string>& passthrough() const { return passthrough_; }

 private:
  std::string error_;
  std::map<std::string, std::vector<std::string>> values_;
  std::set<std::string> switches_set_;
  std::vector<std::string> positional_;
  std::vector<std::string> passthrough_;
};

// Copies `--flag` into `args[key]` when given: as a string, or as a JSON integer. The tool's
// schema judges the value (range, pattern) exactly as it judges an MCP argument; an integer
// flag that is not an integer returns false (a usage error).
void CopyStringFlag(const Flags& flags, const std::string& flag, Json& args, const std::string& key);
bool CopyIntegerFlag(const Flags& flags, const std::string& flag, Json& args, const std::string& key);

}  // namespace mt::tools::cli
