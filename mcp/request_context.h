// The CallContext handlers receive (see call_context.h), bound to one request's env.
#pragma once
#include <vector>

#include "mcp/call_context.h"
#include "mcp/server.h"

namespace mt::mcp {

// Thrown inside a modern-era handler when it needs answers the client has not given yet;
// the dispatcher turns it into an `input_required` result. Never caught by handlers.
struct InputRequiredSignal {
  std::vector<InputRequest> requests;
};

// The capability a server→client method needs, as a ClientCapabilities object.
Json RequiredCapability(const std::string& method, const Json& params);
// Whether `caps` declare what `method` needs (form elicitation is implied by `elicitation: {}`).
bool ClientDeclares(const Json& caps, const std::string& method);
// Throws RpcError(kMissingRequiredClientCapability) unless `caps` declare what `r` needs.
void CheckClientCapability(const Json& caps, const InputRequest& r);
// An answer the client supplied is client-controlled: throws RpcError(kInvalidParams) unless
// it has the shape of the result of `r.method` (`where` names it in the message).
void CheckAnswerShape(const InputRequest& r, const Json& answer, const std::string& where = "inputResponses");

class RequestContext : public CallContext {
 public:
  RequestContext(RequestEnv& env, Json progress_token, Json answers, Json round_state);

  Era era() const override { return env_.era; }
  const Principal& caller() const override { return env_.principal; }
  const Json& client_capabilities() const override { return env_.client_capabilities; }
  bool ClientCan(const std::string& method) const override;
  bool cancelled() const override;
  void ReportProgress(double progress, std::optional<double> total, const std::string& message) override;
  void Log(LogLevel level, const Json& data, const std::string& logger) override;
  Json AskClient(const InputRequest& request, std::chrono::milliseconds timeout) override;
  std::map<std::string, Json> AskClientAll(const std::vector<InputRequest>& requests) override;
  const Json& round_state() const override { return round_state_; }
  void set_round_state(Json state) override { round_state_ = std::move(state); }

  // Every answer gathered so far (earlier rounds + this retry), for the next requestState.
  const Json& answers() const { return answers_; }

 private:
  RequestEnv& env_;
  Json progress_token_;
  Json answers_;
  Json round_state_;
};

}  // namespace mt::mcp
