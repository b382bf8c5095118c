// The CallContext of a tool call that runs as a task (mcp/tasks.h). It outlives the request
// that created the task, so it keeps its own copy of what it needs from it: the caller, the
// client capabilities, the answers gathered so far.
//
// A call of a tool with `Tool::task_on_demand` starts in a pre-task phase: the handler runs
// on the task's thread while the request waits, and the context forwards everything to the
// request's own context (questions are input_required round trips, progress goes to the
// request's stream). ContinueAsTask() creates the task, hands its id to the waiting request
// (TaskLaunch) and switches the context to the task.
#pragma once
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>

#include "mcp/call_context.h"
#include "mcp/request_context.h"
#include "mcp/tasks.h"

namespace mt::mcp {

// How an on-demand call turned out, passed from the handler's thread to the request's.
class TaskLaunch {
 public:
  enum class Outcome { kPending, kTask, kResult, kInputRequired, kError };

  void BecameTask(std::shared_ptr<Task> task, Json created);
  void Answered(Json call_tool_result);
  void NeedsInput(InputRequiredSignal need);
  void Failed(RpcError error);
  // Blocks until one of the above happened.
  Outcome Wait();

  std::shared_ptr<Task> task;
  Json created;                                // the CreateTaskResult, as of ContinueAsTask
  Json result;
  InputRequiredSignal need;
  std::optional<RpcError> error;

 private:
  void Set(Outcome o);
  std::mutex mu_;
  std::condition_variable cv_;
  Outcome outcome_ = Outcome::kPending;
};

class TaskContext : public CallContext {
 public:
  // A call that is a task from the start.
  TaskContext(TaskStore& store, std::shared_ptr<Task> task, Principal caller, Json client_capabilities,
              Json answers, Json round_state);
  // An on-demand call: acts as `pre` until ContinueAsTask().
  TaskContext(TaskStore& store, std::string tool, Principal caller, Json client_capabilities, RequestContext* pre,
              std::shared_ptr<TaskLaunch> launch);

  Era era() const override { return Era::kModern; }
  const Principal& caller() const override { return caller_; }
  const Json& client_capabilities() const override { return caps_; }
  bool ClientCan(const std::string& method) const override;
  bool cancelled() const override;
  void ReportProgress(double progress, std::optional<double> total, const std::string& message) override;
  void Log(LogLevel level, const Json& data, const std::string& logger) override;
  Json AskClient(const InputRequest& request, std::chrono::milliseconds timeout) override;
  std::map<std::string, Json> AskClientAll(const std::vector<InputRequest>& requests) override;
  const Json& round_state() const override;
  void set_round_state(Json state) override;
  bool ContinueAsTask() override;
  std::string task_id() const override { return task_ ? task_->id : ""; }

  // The task, once there is one (null during the pre-task phase).
  const std::shared_ptr<Task>& task() const { return task_; }
  const std::shared_ptr<TaskLaunch>& launch() const { return launch_; }

 private:
  std::map<std::string, Json> Ask(const std::vector<InputRequest>& requests, std::chrono::milliseconds timeout);

  TaskStore& store_;
  std::string tool_;
  Principal caller_;
  Json caps_;
  RequestContext* pre_ = nullptr;
  std::shared_ptr<TaskLaunch> launch_;
  std::shared_ptr<Task> task_;
  Json answers_ = Json::object();
  Json round_state_;
};

}  // namespace mt::mcp
