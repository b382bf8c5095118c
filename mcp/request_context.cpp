#include "mcp/request_context.h"

#include "mcp/json_rpc.h"

namespace mt::mcp {

Json RequiredCapability(const std::string& method, const Json& params) {
  if (method == "elicitation/create") {
    bool url = params.is_object() && params.value("mode", "") == "url";
    return Json{{"elicitation", url ? Json{{"url", Json::object()}} : Json::object()}};
  }
  if (method == "sampling/createMessage") return Json{{"sampling", Json::object()}};
  if (method == "roots/list") return Json{{"roots", Json::object()}};
  return Json::object();
}

RequestContext::RequestContext(RequestEnv& env, Json progress_token, Json answers, Json round_state)
    : env_(env),
      progress_token_(std::move(progress_token)),
      answers_(answers.is_object() ? std::move(answers) : Json::object()),
      round_state_(std::move(round_state)) {}

bool ClientDeclares(const Json& caps, const std::string& method) {
  Json need = RequiredCapability(method, Json::object());
  for (auto it = need.begin(); it != need.end(); ++it) {
    auto have = caps.find(it.key());
    if (have == caps.end() || !have->is_object()) return false;
  }
  return true;
}

void CheckClientCapability(const Json& caps, const InputRequest& r) {
  Json need = RequiredCapability(r.method, r.params);
  for (auto it = need.begin(); it != need.end(); ++it) {
    auto have = caps.find(it.key());
    bool ok = have != caps.end() && have->is_object();
    // Form mode is implied by an empty elicitation object; url mode must be declared.
    if (ok && it.value().contains("url")) ok = have->contains("url");
    if (!ok) {
      throw RpcError(kMissingRequiredClientCapability,
                     "this request needs the client capability '" + it.key() + "' (for " + r.method + ")",
                     Json{{"requiredCapabilities", need}});
    }
  }
}

void CheckAnswerShape(const InputRequest& r, const Json& a, const std::string& where) {
  bool ok = a.is_object();
  if (ok && r.method == "elicitation/create") ok = a.contains("action") && a["action"].is_string();
  if (ok && r.method == "sampling/createMessage") ok = a.contains("content");
  if (ok && r.method == "roots/list") ok = a.contains("roots") && a["roots"].is_array();
  if (!ok) throw RpcError(kInvalidParams, where + "." + r.key + " is not a valid " + r.method + " result");
}

bool RequestContext::ClientCan(const std::string& method) const {
  return ClientDeclares(env_.client_capabilities, method);
}

bool RequestContext::cancelled() const {
  if (env_.cancel && env_.cancel->load()) return true;
  return env_.channel && env_.channel->CloseCancels() && env_.channel->Closed();
}

void RequestContext::ReportProgress(double progress, std::optional<double> total, const std::string& message) {
  if (progress_token_.is_null() || !env_.channel || !env_.channel->CanSend()) return;
  Json p = {{"progressToken", progress_token_}, {"progress", progress}};
  if (total) p["total"] = *total;
  if (!message.empty()) p["message"] = message;
  env_.channel->Send(MakeNotification("notifications/progress", std::move(p)));
}

void RequestContext::Log(LogLevel level, const Json& data, const std::string& logger) {
  if (!env_.log_level || level < *env_.log_level) return;
  if (!env_.channel || !env_.channel->CanSend()) return;
  Json p = {{"level", LogLevelName(level)}, {"data", data}};
  if (!logger.empty()) p["logger"] = logger;
  env_.channel->Send(MakeNotification("notifications/message", std::move(p)));
}


Json RequestContext::AskClient(const InputRequest& r, std::chrono::milliseconds timeout) {
  CheckClientCapability(env_.client_capabilities, r);
  if (env_.era == Era::kModern) {
    if (auto it = answers_.find(r.key); it != answers_.end()) {
      CheckAnswerShape(r, *it);
      return *it;
    }
    throw InputRequiredSignal{{r}};
  }
  if (!env_.session || !env_.channel || !env_.channel->CanSend()) {
    throw RpcError(kInternalError, "this connection cannot carry " + r.method +
                                       " to the client (HTTP requests must accept text/event-stream)");
  }
  Json answer = env_.session->Request(*env_.channel, r.method, r.params, timeout, [this] { return cancelled(); });
  answers_[r.key] = answer;
  return answer;
}

std::map<std::string, Json> RequestContext::AskClientAll(const std::vector<InputRequest>& requests) {
  std::map<std::string, Json> out;
  if (env_.era == Era::kModern) {
    std::vector<InputRequest> missing;
    for (const auto& r : requests) {
      CheckClientCapability(env_.client_capabilities, r);
      if (auto it = answers_.find(r.key); it != answers_.end()) {
        CheckAnswerShape(r, *it);
        out[r.key] = *it;
      } else {
        missing.push_back(r);
      }
    }
    if (!missing.empty()) throw InputRequiredSignal{std::move(missing)};
    return out;
  }
  for (const auto& r : requests) out[r.key] = AskClient(r, std::chrono::minutes(10));
  return out;
}

}  // namespace mt::mcp
