// JSON-RPC 2.0 framing for MCP: error codes, the exception handlers throw to produce a
// JSON-RPC error, classification of inbound messages, and response builders.
#pragma once
#include <optional>
#include <stdexcept>
#include <string>

#include "mcp/json.h"

namespace mt::mcp {

enum ErrorCode : int {
  kParseError = -32700,
  kInvalidRequest = -32600,
  kMethodNotFound = -32601,
  kInvalidParams = -32602,
  kInternalError = -32603,
  kResourceNotFoundLegacy = -32002,       // <= 2025-11-25 only
  kUrlElicitationRequired = -32042,       // 2025-11-25 only
  kHeaderMismatch = -32020,               // 2026-07-28
  kMissingRequiredClientCapability = -32021,
  kUnsupportedProtocolVersion = -32022,
  // Implementation-defined (-32000…-32019, a range MCP never allocates): the caller already
  // has as many tasks as it may (mcp/tasks.h); data.limit says how many.
  kTooManyTasks = -32010,
};

// Thrown by dispatch code and handlers to answer a request with a JSON-RPC error.
class RpcError : public std::runtime_error {
 public:
  RpcError(int code, std::string message, Json data = nullptr)
      : std::runtime_error(message), code_(code), data_(std::move(data)) {}
  int code() const { return code_; }
  const Json& data() const { return data_; }
  Json ToJson() const;

 private:
  int code_;
  Json data_;
};

enum class MessageKind { kRequest, kNotification, kResponse };

// One inbound JSON-RPC message, checked for shape. Ids are kept verbatim (string or
// number, any size that JSON can carry) so responses echo them exactly.
struct Message {
  MessageKind kind = MessageKind::kRequest;
  Json id;          // null for notifications
  std::string method;
  Json params;      // object, or null when absent
  Json result;      // responses only
  Json error;       // responses only (null when it is a result)
};

// Checks the JSON-RPC 2.0 envelope. Throws RpcError(kInvalidRequest) with a specific
// message; the thrown error carries the id when one could be read (`*id_out`).
Message Classify(Json raw, Json* id_out);

Json MakeResult(const Json& id, Json result);
Json MakeError(const Json& id, const RpcError& error);
Json MakeNotification(std::string method, Json params);
Json MakeRequest(const Json& id, std::string method, Json params);

}  // namespace mt::mcp
