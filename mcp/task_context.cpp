#include "mcp/task_context.h"

#include <sstream>

namespace mt::mcp {

void TaskLaunch::Set(Outcome o) {
  std::lock_guard lock(mu_);
  outcome_ = o;
  cv_.notify_all();
}

void TaskLaunch::BecameTask(std::shared_ptr<Task> t, Json c) {
  task = std::move(t);
  created = std::move(c);
  Set(Outcome::kTask);
}

void TaskLaunch::Answered(Json r) {
  result = std::move(r);
  Set(Outcome::kResult);
}

void TaskLaunch::NeedsInput(InputRequiredSignal n) {
  need = std::move(n);
  Set(Outcome::kInputRequired);
}

void TaskLaunch::Failed(RpcError e) {
  error = std::move(e);
  Set(Outcome::kError);
}

TaskLaunch::Outcome TaskLaunch::Wait() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return outcome_ != Outcome::kPending; });
  return outcome_;
}

TaskContext::TaskContext(TaskStore& store, std::shared_ptr<Task> task, Principal caller, Json caps, Json answers,
                         Json round_state)
    : store_(store),
      tool_(task->tool),
      caller_(std::move(caller)),
      caps_(std::move(caps)),
      task_(std::move(task)),
      answers_(answers.is_object() ? std::move(answers) : Json::object()),
      round_state_(std::move(round_state)) {}

TaskContext::TaskContext(TaskStore& store, std::string tool, Principal caller, Json caps, RequestContext* pre,
                         std::shared_ptr<TaskLaunch> launch)
    : store_(store),
      tool_(std::move(tool)),
      caller_(std::move(caller)),
      caps_(std::move(caps)),
      pre_(pre),
      launch_(std::move(launch)) {}

bool TaskContext::ClientCan(const std::string& method) const { return ClientDeclares(caps_, method); }

bool TaskContext::cancelled() const {
  if (pre_) return pre_->cancelled();
  return task_ && task_->cancel->load();
}

void TaskContext::ReportProgress(double progress, std::optional<double> total, const std::string& message) {
  if (pre_) return pre_->ReportProgress(progress, total, message);
  // A task has no stream for notifications/progress: progress shows as its statusMessage.
  std::ostringstream s;
  s << progress;
  if (total) s << "/" << *total;
  if (!message.empty()) s << ": " << message;
  store_.SetStatusMessage(*task_, s.str());
}

void TaskContext::Log(LogLevel level, const Json& data, const std::string& logger) {
  if (pre_) pre_->Log(level, data, logger);
  // Tasks carry no notifications/message (SEP-2663); the log line has nowhere to go.
}

const Json& TaskContext::round_state() const { return pre_ ? pre_->round_state() : round_state_; }

void TaskContext::set_round_state(Json state) {
  if (pre_) pre_->set_round_state(std::move(state));
  else round_state_ = std::move(state);
}

bool TaskContext::ContinueAsTask() {
  if (task_) return true;
  auto task = store_.Create(caller_, tool_);   // throws kTooManyTasks: the request gets it
  answers_ = pre_->answers();
  round_state_ = pre_->round_state();
  task_ = task;
  pre_ = nullptr;                              // the request is about to return: never touch it again
  Json created = store_.Created(*task);
  launch_->BecameTask(std::move(task), std::move(created));
  return true;
}

std::map<std::string, Json> TaskContext::Ask(const std::vector<InputRequest>& requests,
                                             std::chrono::milliseconds timeout) {
  std::map<std::string, Json> out;
  std::vector<InputRequest> missing;
  for (const auto& r : requests) {
    CheckClientCapability(caps_, r);
    if (auto it = answers_.find(r.key); it != answers_.end()) {
      CheckAnswerShape(r, *it);
      out[r.key] = *it;
    } else {
      missing.push_back(r);
    }
  }
  if (missing.empty()) return out;
  // Answers arrive through tasks/update, which checked their shape against the question.
  for (auto& [key, answer] : store_.AwaitInput(*task_, missing, timeout)) {
    answers_[key] = answer;
    out[key] = std::move(answer);
  }
  return out;
}

Json TaskContext::AskClient(const InputRequest& request, std::chrono::milliseconds timeout) {
  if (pre_) return pre_->AskClient(request, timeout);
  return Ask({request}, timeout)[request.key];
}

std::map<std::string, Json> TaskContext::AskClientAll(const std::vector<InputRequest>& requests) {
  if (pre_) return pre_->AskClientAll(requests);
  return Ask(requests, std::chrono::minutes(10));
}

}  // namespace mt::mcp
