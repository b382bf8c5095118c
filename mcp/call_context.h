// What a handler (tool, prompt, resource) can do during one request: learn who calls and
// with which client capabilities, report progress, log, notice cancellation, and ask the
// client for input (elicitation, sampling, roots).
//
// Asking the client works in both eras with the same handler code:
//  - legacy: a real server→client request (e.g. `elicitation/create`) on the request's
//    stream; AskClient blocks until the answer arrives;
//  - modern (2026-07-28, multi round-trip requests): if the answer is among the retry's
//    `inputResponses` (or an earlier round's, kept in the signed `requestState`), it is
//    returned; otherwise the handler is unwound and the client receives an
//    `input_required` result, then re-runs the request with the answers. Handlers
//    therefore must be re-runnable from the top and must not swallow exceptions they
//    do not know (catch specific types, never `catch (...)` without rethrowing).
//  - inside a task (Tasks extension, see mcp/tasks.h): the task goes to `input_required`
//    with the question in its `inputRequests`; AskClient blocks until the client answers
//    with `tasks/update` (or the task is cancelled, or the timeout passes).
//
// Cancellation: cancelled() turns true when the client cancels (stdio notification, HTTP
// stream closed, `tasks/cancel` for a task); long handlers poll it and stop, undoing what
// they started where that matters.
#pragma once
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mcp/json.h"
#include "mcp/principal.h"
#include "mcp/protocol.h"

namespace mt::mcp {

struct InputRequest {
  std::string key;      // stable name of this question within the handler
  std::string method;   // elicitation/create | sampling/createMessage | roots/list
  Json params;
};

class CallContext {
 public:
  virtual ~CallContext() = default;

  virtual Era era() const = 0;
  virtual const Principal& caller() const = 0;
  // Client capabilities: from `initialize` (legacy) or the request's `_meta` (modern).
  virtual const Json& client_capabilities() const = 0;
  // Whether the client declared what `method` needs (e.g. "elicitation/create" needs
  // `elicitation`; form mode is implied by an empty object).
  virtual bool ClientCan(const std::string& method) const = 0;

  // True once the client cancelled the request or went away; long handlers poll it.
  virtual bool cancelled() const = 0;

  // notifications/progress, only when the request carried a progress token.
  virtual void ReportProgress(double progress, std::optional<double> total = std::nullopt,
                              const std::string& message = "") = 0;
  // notifications/message, only when the client asked for logs at this level.
  virtual void Log(LogLevel level, const Json& data, const std::string& logger = "") = 0;

  // Asks the client and returns its answer (the JSON-RPC result of the request).
  // Throws RpcError(kMissingRequiredClientCapability) when the client did not declare
  // the capability, RpcError(kInternalError) when no channel can carry the request
  // (legacy HTTP request answered as plain JSON), or on timeout.
  virtual Json AskClient(const InputRequest& request,
                         std::chrono::milliseconds timeout = std::chrono::minutes(10)) = 0;
  // Several questions at once; in the modern era they travel in one input_required.
  virtual std::map<std::string, Json> AskClientAll(const std::vector<InputRequest>& requests) = 0;

  // Handler-defined state carried across modern rounds inside the signed requestState
  // (null in the first round). Legacy handlers never need it.
  virtual const Json& round_state() const = 0;
  virtual void set_round_state(Json state) = 0;

  // For tools with `Tool::task_on_demand`: from here on the call runs as a task when the
  // client negotiated the Tasks extension (the client receives the task handle now; the rest
  // runs in the background). Returns whether it does; false means the handler simply goes on
  // answering the request. Throws RpcError(kTooManyTasks) when the caller has too many tasks.
  virtual bool ContinueAsTask() { return false; }
  // The id of the task this call runs as; empty when it is not a task.
  virtual std::string task_id() const { return ""; }
};

}  // namespace mt::mcp
