#include "mcp/local_call.h"

#include "mcp/json_rpc.h"

namespace mt::mcp {

Principal LocalCallContext::LocalUser() {
  Principal p;
  p.name = "local";
  p.role = "agent";   // the CLI's approvals go through `mt approve`, not through this call
  return p;
}

Json LocalCallContext::AskClient(const InputRequest& request, std::chrono::milliseconds) {
  throw RpcError(kInternalError, "no client to ask (" + request.method + "): this call runs in-process");
}

std::map<std::string, Json> LocalCallContext::AskClientAll(const std::vector<InputRequest>& requests) {
  throw RpcError(kInternalError, "no client to ask (" + (requests.empty() ? std::string("nothing") : requests[0].method) +
                                     "): this call runs in-process");
}

ToolResult CallToolLocally(const Tool& tool, const Json& arguments, CallContext& ctx) {
  if (auto err = CheckToolArguments(tool, arguments)) return ToolResult::Error(*err);
  ToolResult r;
  try {
    r = tool.handler(arguments, ctx);
  } catch (const std::exception& e) {
    r = ToolResult::Error("tool " + tool.name + " failed: " + e.what());
  }
  return CheckToolOutput(tool, std::move(r));
}

ToolResult CallToolLocally(const Tool& tool, const Json& arguments) {
  LocalCallContext ctx;
  return CallToolLocally(tool, arguments, ctx);
}

}  // namespace mt::mcp
