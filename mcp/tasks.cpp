#include "mcp/tasks.h"

#include <openssl/rand.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <stdexcept>

#include "mcp/base64.h"
#include "mcp/request_context.h"

namespace mt::mcp {

namespace {

int64_t SystemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string NewTaskId() {
  unsigned char raw[16];
  if (RAND_bytes(raw, sizeof raw) != 1) throw std::runtime_error("RAND_bytes failed");
  return HexEncode(std::string_view(reinterpret_cast<const char*>(raw), sizeof raw));
}

// One answer for every id that is not the caller's own live or kept task, so that another
// principal learns nothing about which ids exist.
RpcError NotFound() { return RpcError(kInvalidParams, kTaskNotFound); }

}  // namespace

bool DeclaresTasks(const Json& caps) {
  if (!caps.is_object()) return false;
  auto ext = caps.find("extensions");
  if (ext == caps.end() || !ext->is_object()) return false;
  auto t = ext->find(kTasksExtension);
  return t != ext->end() && t->is_object();
}

RpcError TasksExtensionRequired(const std::string& what) {
  return RpcError(kMissingRequiredClientCapability,
                  what + " needs the client capability extensions[\"" + kTasksExtension + "\"]",
                  Json{{"requiredCapabilities", {{"extensions", {{kTasksExtension, Json::object()}}}}}});
}

const char* TaskStatusName(TaskStatus s) {
  switch (s) {
    case TaskStatus::kWorking: return "working";
    case TaskStatus::kInputRequired: return "input_required";
    case TaskStatus::kCompleted: return "completed";
    case TaskStatus::kFailed: return "failed";
    case TaskStatus::kCancelled: return "cancelled";
  }
  return "working";
}

std::string IsoTime(int64_t unix_ms) {
  std::time_t secs = std::time_t(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, int(((unix_ms % 1000) + 1000) % 1000));
  return buf;
}

TaskStore::TaskStore(TaskOptions options, Clock now)
    : options_(std::move(options)), now_(now ? std::move(now) : Clock(SystemNowMs)) {}

void TaskStore::PurgeLocked(int64_t now) {
  const int64_t keep = options_.keep_finished.count();
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    const Task& t = *it->second;
    if (!t.running && IsTerminal(t.status) && t.finished_ms + keep <= now) it = tasks_.erase(it);
    else ++it;
  }
}

bool TaskStore::EvictOldestFinishedLocked(const std::string* owner) {
  auto victim = tasks_.end();
  for (auto it = tasks_.begin(); it != tasks_.end(); ++it) {
    const Task& t = *it->second;
    if (t.running || !IsTerminal(t.status) || (owner && t.owner != *owner)) continue;
    if (victim == tasks_.end() ||
        std::pair(t.finished_ms, t.seq) < std::pair(victim->second->finished_ms, victim->second->seq))
      victim = it;
  }
  if (victim == tasks_.end()) return false;
  tasks_.erase(victim);
  return true;
}

std::shared_ptr<Task> TaskStore::Create(const Principal& owner, const std::string& tool) {
  std::lock_guard lock(mu_);
  const int64_t now = now_();
  PurgeLocked(now);
  auto run = running_.find(owner.name);
  const size_t active = run == running_.end() ? 0 : run->second;
  if (active >= options_.max_active_per_caller) {
    throw RpcError(kTooManyTasks,
                   "too many tasks: caller '" + owner.name + "' already has " + std::to_string(active) +
                       " tasks running (the limit); wait for one to finish or cancel one with tasks/cancel",
                   Json{{"limit", options_.max_active_per_caller}});
  }
  size_t kept = 0;
  for (const auto& [id, t] : tasks_) kept += t->owner == owner.name;
  if (kept >= options_.max_kept_per_caller && !EvictOldestFinishedLocked(&owner.name)) {
    throw RpcError(kTooManyTasks, "too many tasks kept for caller '" + owner.name + "'",
                   Json{{"limit", options_.max_kept_per_caller}});
  }
  if (tasks_.size() >= options_.max_tasks && !EvictOldestFinishedLocked(nullptr)) {
    throw RpcError(kTooManyTasks, "too many tasks running on this server; retry later",
                   Json{{"limit", options_.max_tasks}});
  }
  auto t = std::make_shared<Task>();
  do t->id = NewTaskId();
  while (tasks_.count(t->id));
  t->owner = owner.name;
  t->tool = tool;
  t->created_ms = t->updated_ms = now;
  t->seq = next_seq_++;
  tasks_[t->id] = t;
  ++running_[owner.name];
  return t;
}

std::shared_ptr<Task> TaskStore::FindLocked(const std::string& id, const Principal& caller) {
  PurgeLocked(now_());
  auto it = tasks_.find(id);
  if (it == tasks_.end() || it->second->owner != caller.name) throw NotFound();
  return it->second;
}

Json TaskStore::TaskJsonLocked(const Task& t, int64_t now) const {
  // ttlMs counts from creation: a running task is kept at least keep_finished from now, a
  // finished one until keep_finished after it ended (so the value grows while it runs).
  const int64_t keep = options_.keep_finished.count();
  int64_t expires = IsTerminal(t.status) ? t.finished_ms + keep : now + keep;
  Json j = {{"taskId", t.id},
            {"status", TaskStatusName(t.status)},
            {"createdAt", IsoTime(t.created_ms)},
            {"lastUpdatedAt", IsoTime(t.updated_ms)},
            {"ttlMs", std::max<int64_t>(1, expires - t.created_ms)},
            {"pollIntervalMs", std::max<int64_t>(1, options_.poll_interval.count())}};
  if (!t.status_message.empty()) j["statusMessage"] = t.status_message;
  return j;
}

Json TaskStore::Created(const Task& t) {
  std::lock_guard lock(mu_);
  Json j = TaskJsonLocked(t, now_());
  j["resultType"] = "task";
  return j;
}

Json TaskStore::Get(const std::string& id, const Principal& caller) {
  std::lock_guard lock(mu_);
  auto t = FindLocked(id, caller);
  Json j = TaskJsonLocked(*t, now_());
  switch (t->status) {
    case TaskStatus::kInputRequired: {
      Json requests = Json::object();
      for (const auto& [key, q] : t->outstanding) requests[key] = {{"method", q.method}, {"params", q.params}};
      j["inputRequests"] = std::move(requests);
      break;
    }
    case TaskStatus::kCompleted: j["result"] = t->result; break;
    case TaskStatus::kFailed: j["error"] = t->error; break;
    default: break;
  }
  j["resultType"] = "complete";
  return j;
}

void TaskStore::Update(const std::string& id, const Principal& caller, const Json& responses) {
  if (!responses.is_object()) throw RpcError(kInvalidParams, "params.inputResponses must be an object");
  std::lock_guard lock(mu_);
  auto t = FindLocked(id, caller);
  if (IsTerminal(t->status)) return;
  // Validate every answer first, so a bad one applies none of them.
  for (auto it = responses.begin(); it != responses.end(); ++it) {
    auto q = t->outstanding.find(it.key());
    if (q != t->outstanding.end()) CheckAnswerShape(q->second, it.value());
  }
  bool any = false;
  for (auto it = responses.begin(); it != responses.end(); ++it) {
    auto q = t->outstanding.find(it.key());
    if (q == t->outstanding.end()) continue;   // never asked, already answered, or superseded
    t->delivered[it.key()] = it.value();
    t->outstanding.erase(q);
    any = true;
  }
  if (!any) return;
  if (t->outstanding.empty()) t->status = TaskStatus::kWorking;
  Touch(*t, now_());
  cv_.notify_all();
}

void TaskStore::Cancel(const std::string& id, const Principal& caller) {
  std::lock_guard lock(mu_);
  auto t = FindLocked(id, caller);
  if (IsTerminal(t->status)) return;   // idempotent: a finished task keeps its outcome
  const int64_t now = now_();
  t->cancel->store(true);
  t->status = TaskStatus::kCancelled;
  t->status_message = "cancelled by the client";
  t->outstanding.clear();
  t->finished_ms = now;
  Touch(*t, now);
  cv_.notify_all();
}

void TaskStore::Complete(Task& t, Json result) {
  std::lock_guard lock(mu_);
  if (IsTerminal(t.status)) return;
  const int64_t now = now_();
  t.status = TaskStatus::kCompleted;
  t.result = std::move(result);
  t.outstanding.clear();
  t.finished_ms = now;
  Touch(t, now);
}

void TaskStore::Fail(Task& t, const RpcError& error) {
  std::lock_guard lock(mu_);
  if (IsTerminal(t.status)) return;
  const int64_t now = now_();
  t.status = TaskStatus::kFailed;
  t.error = error.ToJson();
  t.status_message = error.what();
  t.outstanding.clear();
  t.finished_ms = now;
  Touch(t, now);
}

void TaskStore::SetStatusMessage(Task& t, std::string message) {
  std::lock_guard lock(mu_);
  if (IsTerminal(t.status)) return;
  t.status_message = std::move(message);
  Touch(t, now_());
}

void TaskStore::Finished(Task& t) {
  std::lock_guard lock(mu_);
  if (!t.running) return;
  t.running = false;
  if (!IsTerminal(t.status)) {   // the runner always settles first; never leave a task working
    t.status = TaskStatus::kFailed;
    t.error = RpcError(kInternalError, "the task ended without a result").ToJson();
    t.finished_ms = now_();
    Touch(t, t.finished_ms);
  }
  auto it = running_.find(t.owner);
  if (it != running_.end() && it->second > 0 && --it->second == 0) running_.erase(it);
}

std::map<std::string, Json> TaskStore::AwaitInput(Task& t, const std::vector<InputRequest>& questions,
                                                   std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  if (IsTerminal(t.status)) throw RpcError(kInternalError, "the task was cancelled");
  for (const auto& q : questions) t.outstanding[q.key] = q;
  t.status = TaskStatus::kInputRequired;
  Touch(t, now_());
  auto answered = [&] {
    for (const auto& q : questions)
      if (!t.delivered.count(q.key)) return false;
    return true;
  };
  bool ok = cv_.wait_for(lock, timeout, [&] { return answered() || t.cancel->load() || IsTerminal(t.status); });
  if (!ok || !answered()) {
    for (const auto& q : questions) {
      t.outstanding.erase(q.key);
      t.delivered.erase(q.key);
    }
    if (!IsTerminal(t.status)) {
      t.status = t.outstanding.empty() ? TaskStatus::kWorking : TaskStatus::kInputRequired;
      Touch(t, now_());
    }
    throw RpcError(kInternalError, ok || t.cancel->load() ? "the task was cancelled while waiting for the client"
                                                          : "the client did not answer the task's input requests in time");
  }
  std::map<std::string, Json> out;
  for (const auto& q : questions) {
    out[q.key] = std::move(t.delivered[q.key]);
    t.delivered.erase(q.key);
  }
  return out;
}

void TaskStore::CancelAll() {
  std::lock_guard lock(mu_);
  const int64_t now = now_();
  for (auto& [id, t] : tasks_) {
    if (!t->running) continue;
    t->cancel->store(true);
    if (!IsTerminal(t->status)) {
      t->status = TaskStatus::kCancelled;
      t->status_message = "the server is shutting down";
      t->finished_ms = now;
      Touch(*t, now);
    }
  }
  cv_.notify_all();
}

size_t TaskStore::size() {
  std::lock_guard lock(mu_);
  PurgeLocked(now_());
  return tasks_.size();
}

size_t TaskStore::running(const std::string& owner) {
  std::lock_guard lock(mu_);
  auto it = running_.find(owner);
  return it == running_.end() ? 0 : it->second;
}

void TaskThreads::Spawn(std::function<void()> fn) {
  std::lock_guard lock(mu_);
  // Join the runners that are done, so finished threads do not pile up.
  for (auto it = runners_.begin(); it != runners_.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = runners_.erase(it);
    } else {
      ++it;
    }
  }
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread th([fn = std::move(fn), done] {
    fn();
    done->store(true);
  });
  runners_.push_back({std::move(th), std::move(done)});
}

void TaskThreads::JoinAll() {
  std::vector<Runner> all;
  {
    std::lock_guard lock(mu_);
    all.swap(runners_);
  }
  for (auto& r : all) r.thread.join();
}

}  // namespace mt::mcp
