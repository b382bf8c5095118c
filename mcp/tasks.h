// The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663, on 2026-07-28): a
// `tools/call` of a tool that supports tasks (Tool::task_support) is answered at once with a
// task handle (`resultType: "task"`) when the request's client capabilities declare the
// extension; the handler runs in the background and the client polls `tasks/get`, answers
// questions with `tasks/update` and may `tasks/cancel`.
//
// TaskStore keeps the tasks and enforces the rules that make this safe to expose:
//  - task ids are 128 random bits, and each task is bound to the principal that created it:
//    any other caller gets the same -32602 as for an id that never existed;
//  - bounded memory: a cap on tasks still running per caller (a flood of creations gets
//    -32010 kTooManyTasks), a cap on tasks kept per caller and in all (the oldest finished
//    ones make room), and finished tasks expire `keep_finished` after they end;
//  - `tasks/cancel` marks the task cancelled at once and raises the cancel flag its handler
//    polls (CallContext::cancelled()); a result that arrives afterwards is dropped;
//  - questions a task's handler asks (CallContext::AskClient) wait in `inputRequests` until
//    `tasks/update` answers them; answers are checked for the shape of the method's result.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mcp/call_context.h"
#include "mcp/json.h"
#include "mcp/json_rpc.h"
#include "mcp/principal.h"
#include "mcp/session.h"

namespace mt::mcp {

inline constexpr const char* kTasksExtension = "io.modelcontextprotocol/tasks";
// The -32602 message for every task id that is not the caller's own (unknown, expired, or
// another principal's).
inline constexpr const char* kTaskNotFound =
    "task not found: no task with this taskId exists for this caller (it may have expired)";

// Whether client capabilities declare the Tasks extension (`extensions[kTasksExtension]`).
bool DeclaresTasks(const Json& client_capabilities);
// -32021 with `data.requiredCapabilities.extensions[kTasksExtension]`.
RpcError TasksExtensionRequired(const std::string& what);

enum class TaskStatus { kWorking, kInputRequired, kCompleted, kFailed, kCancelled };
const char* TaskStatusName(TaskStatus s);
inline bool IsTerminal(TaskStatus s) {
  return s == TaskStatus::kCompleted || s == TaskStatus::kFailed || s == TaskStatus::kCancelled;
}

struct TaskOptions {
  bool enabled = true;                         // advertise the extension and create tasks
  size_t max_active_per_caller = 16;           // handlers still running (cancelled ones until they stop)
  size_t max_kept_per_caller = 64;             // tasks kept per caller, finished ones included
  size_t max_tasks = 1024;                     // tasks kept, all callers together
  std::chrono::milliseconds keep_finished{std::chrono::minutes(30)};   // results stay this long
  std::chrono::milliseconds poll_interval{1000};                       // the pollIntervalMs hint
};

// One task. Its fields are guarded by the store's lock; handlers only hold it and read
// `cancel`.
struct Task {
  std::string id;
  std::string owner;                           // Principal::name of the creator
  std::string tool;
  TaskStatus status = TaskStatus::kWorking;
  std::string status_message;
  int64_t created_ms = 0, updated_ms = 0, finished_ms = 0;   // unix ms
  uint64_t seq = 0;                            // creation order (ties of the millisecond clock)
  Json result;                                 // completed: the CallToolResult
  Json error;                                  // failed: the JSON-RPC error object
  std::map<std::string, InputRequest> outstanding;   // questions waiting for tasks/update
  std::map<std::string, Json> delivered;             // answers not yet taken by the handler
  CancelFlag cancel = std::make_shared<std::atomic<bool>>(false);
  bool running = true;                         // its handler has not returned yet
};

class TaskStore {
 public:
  using Clock = std::function<int64_t()>;      // unix milliseconds
  explicit TaskStore(TaskOptions options = {}, Clock now = nullptr);

  const TaskOptions& options() const { return options_; }

  // A new task in `working`, owned by `owner`; tasks/get finds it as soon as this returns.
  // Throws RpcError(kTooManyTasks) when the owner already has max_active_per_caller running
  // tasks, or when the store is full of running tasks.
  std::shared_ptr<Task> Create(const Principal& owner, const std::string& tool);

  // tasks/get (the DetailedTask), tasks/update and tasks/cancel for `caller`'s own tasks.
  // Another id — unknown, expired, or another principal's — throws the same
  // RpcError(kInvalidParams). Update ignores keys that are not outstanding and rejects
  // (-32602, nothing applied) an answer whose shape does not fit its question. Cancelling a
  // finished task changes nothing.
  Json Get(const std::string& id, const Principal& caller);
  void Update(const std::string& id, const Principal& caller, const Json& input_responses);
  void Cancel(const std::string& id, const Principal& caller);

  // The CreateTaskResult for a task just created.
  Json Created(const Task& t);

  // The handler's side. Complete/Fail are ignored once the task is terminal (cancelled).
  void Complete(Task& t, Json call_tool_result);
  void Fail(Task& t, const RpcError& error);
  void SetStatusMessage(Task& t, std::string message);
  // The handler returned: its slot no longer counts against the caller's running tasks.
  void Finished(Task& t);
  // Puts `questions` into the task's inputRequests (status input_required) and waits until
  // tasks/update has answered every one; returns the answers by key. Throws RpcError when
  // the task is cancelled meanwhile or `timeout` passes.
  std::map<std::string, Json> AwaitInput(Task& t, const std::vector<InputRequest>& questions,
                                         std::chrono::milliseconds timeout);

  // Shutdown: every task still running is cancelled.
  void CancelAll();

  size_t size();                               // tasks kept (after expiry)
  size_t running(const std::string& owner);    // handlers still running for `owner`

 private:
  std::shared_ptr<Task> FindLocked(const std::string& id, const Principal& caller);
  void PurgeLocked(int64_t now);
  bool EvictOldestFinishedLocked(const std::string* owner);
  Json TaskJsonLocked(const Task& t, int64_t now) const;
  void Touch(Task& t, int64_t now) { t.updated_ms = now; }

  const TaskOptions options_;
  const Clock now_;
  std::mutex mu_;
  std::condition_variable cv_;                 // answers delivered, cancellations
  std::map<std::string, std::shared_ptr<Task>> tasks_;
  std::map<std::string, size_t> running_;      // owner → handlers running
  uint64_t next_seq_ = 0;
};

// Threads that run task handlers, joined when done and all at shutdown.
class TaskThreads {
 public:
  ~TaskThreads() { JoinAll(); }
  void Spawn(std::function<void()> fn);
  void JoinAll();

 private:
  struct Runner {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::mutex mu_;
  std::vector<Runner> runners_;
};

// Unix milliseconds as ISO 8601 UTC with milliseconds ("2026-07-28T10:30:00.000Z").
std::string IsoTime(int64_t unix_ms);

}  // namespace mt::mcp
