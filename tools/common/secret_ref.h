// Where a secret comes from when it is configured: an environment variable or a file, never
// the configuration itself (a metrics source's token, a webhook's URL with its token in the
// path). Read when used, so a rotated secret needs no restart; errors name the variable or
// the file, never the value.
#pragma once
#include <filesystem>
#include <string>

namespace mt::tools {

// Exactly one of these.
struct SecretRef {
  std::string env;                 // an environment variable
  std::filesystem::path file;      // a file (first line, trailing newline dropped; at most 16 KiB)
  std::string value;               // inline: only for values that are not secret (X-Scope-OrgID)
  bool empty() const { return env.empty() && file.empty() && value.empty(); }
};

// "" or the problem when more than one origin is given.
std::string SecretOrigins(const SecretRef& ref);

// The value, read now. Throws std::runtime_error starting with `where` and naming the variable
// or file that is missing, unreadable, too large or empty (never the value).
std::string ReadSecret(const SecretRef& ref, const std::string& where);

}  // namespace mt::tools
