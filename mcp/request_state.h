// Sealing of the 2026-07-28 `requestState`: the client echoes it back byte-exact, so it is
// attacker-controlled. It is HMAC-SHA256-signed, bound to the method, the primitive's
// name, a digest of the arguments and the caller, expires, and can be redeemed once.
#pragma once
#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>

#include "mcp/json.h"

namespace mt::mcp {

struct StateBinding {
  std::string method;      // tools/call | prompts/get | resources/read
  std::string name;        // tool or prompt name, or resource URI
  std::string args_digest; // hex SHA-256 of the canonical arguments
  std::string principal;   // caller name
};

class RequestStateSealer {
 public:
  // `key` empty = a fresh random 32-byte key (states do not survive a restart).
  explicit RequestStateSealer(std::string key = "", std::chrono::seconds ttl = std::chrono::minutes(15));

  std::string Seal(const StateBinding& binding, const Json& payload);

  // Verifies signature, binding, expiry and single use; returns the payload. Throws
  // RpcError(kInvalidParams) with a specific reason otherwise.
  Json Open(const std::string& sealed, const StateBinding& binding);

  static std::string Digest(const Json& arguments);

 private:
  std::string Mac(const std::string& data) const;

  std::string key_;
  std::chrono::seconds ttl_;
  std::mutex mu_;
  std::unordered_map<std::string, int64_t> redeemed_;   // nonce → expiry (unix ms)
};

}  // namespace mt::mcp
