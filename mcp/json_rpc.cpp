#include "mcp/json_rpc.h"

namespace mt::mcp {

Json RpcError::ToJson() const {
  Json e = {{"code", code_}, {"message", what()}};
  if (!data_.is_null()) e["data"] = data_;
  return e;
}

namespace {

bool IsValidId(const Json& id) {
  // MCP's RequestId is a string or an integer (no null, no fractions). Integers beyond
  // 64 bits arrive as floats and are refused too, since they could not be echoed exactly.
  return id.is_string() || id.is_number_integer() || id.is_number_unsigned();
}

}  // namespace

Message Classify(Json raw, Json* id_out) {
  *id_out = nullptr;
  if (!raw.is_object()) {
    throw RpcError(kInvalidRequest, raw.is_array() ? "JSON-RPC batches are not supported (removed in MCP 2025-06-18)"
                                                   : "a JSON-RPC message must be an object");
  }
  auto id_it = raw.find("id");
  if (id_it != raw.end() && IsValidId(*id_it)) *id_out = *id_it;

  auto ver = raw.find("jsonrpc");
  if (ver == raw.end() || !ver->is_string() || *ver != "2.0") {
    throw RpcError(kInvalidRequest, "\"jsonrpc\" must be the string \"2.0\"");
  }
  Message m;
  auto method_it = raw.find("method");
  if (method_it != raw.end()) {
    if (!method_it->is_string() || method_it->get_ref<const std::string&>().empty()) {
      throw RpcError(kInvalidRequest, "\"method\" must be a non-empty string");
    }
    m.method = method_it->get<std::string>();
    auto params = raw.find("params");
    if (params != raw.end() && !params->is_null()) {
      if (!params->is_object()) throw RpcError(kInvalidRequest, "\"params\" must be an object");
      m.params = std::move(*params);
    } else {
      m.params = Json::object();
    }
    if (id_it == raw.end()) {
      m.kind = MessageKind::kNotification;
      return m;
    }
    if (!IsValidId(*id_it)) throw RpcError(kInvalidRequest, "\"id\" must be a string or an integer (64-bit)");
    m.kind = MessageKind::kRequest;
    m.id = *id_it;
    return m;
  }
  // No method: a response to a server→client request.
  auto result = raw.find("result");
  auto error = raw.find("error");
  if (id_it == raw.end() || (result == raw.end()) == (error == raw.end())) {
    throw RpcError(kInvalidRequest, "a message needs \"method\", or \"id\" with exactly one of \"result\"/\"error\"");
  }
  m.kind = MessageKind::kResponse;
  m.id = *id_it;
  if (result != raw.end()) m.result = std::move(*result);
  if (error != raw.end()) m.error = std::move(*error);
  return m;
}

// Built member by member: nlohmann's initializer lists copy their values, and results
// can be large.
Json MakeResult(const Json& id, Json result) {
  Json r(Json::value_t::object);
  r["jsonrpc"] = "2.0";
  r["id"] = id;
  r["result"] = std::move(result);
  return r;
}

Json MakeError(const Json& id, const RpcError& error) {
  // MCP's schema allows no null id: when the id could not be read it is omitted.
  Json e = {{"jsonrpc", "2.0"}};
  if (!id.is_null()) e["id"] = id;
  e["error"] = error.ToJson();
  return e;
}

Json MakeNotification(std::string method, Json params) {
  Json n(Json::value_t::object);
  n["jsonrpc"] = "2.0";
  n["method"] = std::move(method);
  if (!params.is_null()) n["params"] = std::move(params);
  return n;
}

Json MakeRequest(const Json& id, std::string method, Json params) {
  Json r = {{"jsonrpc", "2.0"}, {"id", id}, {"method", std::move(method)}};
  if (!params.is_null()) r["params"] = std::move(params);
  return r;
}

}  // namespace mt::mcp
