// Calling a tool inside this process, through the same checks as a tools/call request: the
// `mt` CLI's entry point, so a command-line flag meets the same limits as an MCP argument.
// The caller is the local user (the person at the shell); nothing can be asked of a client,
// so a tool that needs an answer (an approval form) gets a tool error instead.
#pragma once
#include <string>

#include "mcp/call_context.h"
#include "mcp/tool.h"

namespace mt::mcp {

class LocalCallContext : public CallContext {
 public:
  explicit LocalCallContext(Principal caller = LocalUser()) : caller_(std::move(caller)) {}
  static Principal LocalUser();

  Era era() const override { return Era::kLegacy; }
  const Principal& caller() const override { return caller_; }
  const Json& client_capabilities() const override { return capabilities_; }
  bool ClientCan(const std::string&) const override { return false; }
  bool cancelled() const override { return false; }
  void ReportProgress(double, std::optional<double>, const std::string&) override {}
  void Log(LogLevel, const Json&, const std::string&) override {}
  Json AskClient(const InputRequest& request, std::chrono::milliseconds) override;
  std::map<std::string, Json> AskClientAll(const std::vector<InputRequest>& requests) override;
  const Json& round_state() const override { return state_; }
  void set_round_state(Json state) override { state_ = std::move(state); }

 private:
  Principal caller_;
  Json capabilities_ = Json::object();
  Json state_;
};

// Validates `arguments` against the tool's input schema (an error result names the
// offending argument), runs the handler, turns an exception into a tool error and checks
// a structured result against the output schema.
ToolResult CallToolLocally(const Tool& tool, const Json& arguments, CallContext& ctx);
ToolResult CallToolLocally(const Tool& tool, const Json& arguments);

}  // namespace mt::mcp
