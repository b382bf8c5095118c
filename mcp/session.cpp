#include "mcp/session.h"

#include "mcp/json_rpc.h"

namespace mt::mcp {

CancelFlag InFlight::Begin(const Json& id) {
  auto flag = std::make_shared<std::atomic<bool>>(false);
  std::lock_guard lock(mu_);
  by_id_[id.dump()] = flag;
  return flag;
}

void InFlight::End(const Json& id) {
  std::lock_guard lock(mu_);
  by_id_.erase(id.dump());
}

void InFlight::Cancel(const Json& id) {
  std::lock_guard lock(mu_);
  if (auto it = by_id_.find(id.dump()); it != by_id_.end()) it->second->store(true);
}

void InFlight::CancelAll() {
  std::lock_guard lock(mu_);
  for (auto& [id, flag] : by_id_) flag->store(true);
}

void LegacySession::Initialize(std::string version, Json client_capabilities, Json client_info) {
  std::lock_guard lock(mu_);
  version_ = std::move(version);
  client_capabilities_ = client_capabilities.is_object() ? std::move(client_capabilities) : Json::object();
  client_info_ = std::move(client_info);
  initialized_.store(true);
}

std::string LegacySession::protocol_version() const {
  std::lock_guard lock(mu_);
  return version_;
}

Json LegacySession::client_capabilities() const {
  std::lock_guard lock(mu_);
  return client_capabilities_;
}

void LegacySession::Subscribe(const std::string& uri) {
  std::lock_guard lock(mu_);
  subscriptions_.insert(uri);
}

void LegacySession::Unsubscribe(const std::string& uri) {
  std::lock_guard lock(mu_);
  subscriptions_.erase(uri);
}

bool LegacySession::IsSubscribed(const std::string& uri) const {
  std::lock_guard lock(mu_);
  return subscriptions_.count(uri) > 0;
}

Json LegacySession::Request(Channel& channel, const std::string& method, Json params,
                            std::chrono::milliseconds timeout, const std::function<bool()>& cancelled) {
  auto pending = std::make_shared<Pending>();
  Json id;
  {
    std::lock_guard lock(mu_);
    id = "mt-" + std::to_string(next_request_++);
    pending_[id.dump()] = pending;
  }
  auto forget = [&] {
    std::lock_guard lock(mu_);
    pending_.erase(id.dump());
  };
  if (!channel.Send(MakeRequest(id, method, std::move(params)))) {
    forget();
    throw RpcError(kInternalError, "cannot send " + method + " to the client: the connection is closed");
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(mu_);
  while (!pending->done) {
    // Wake regularly to notice cancellation and a closed stream.
    cv_.wait_for(lock, std::chrono::milliseconds(50));
    if (pending->done) break;
    bool stop = std::chrono::steady_clock::now() > deadline;
    lock.unlock();
    bool gone = cancelled() || channel.Closed();
    lock.lock();
    if (pending->done) break;
    if (stop || gone) {
      pending_.erase(id.dump());
      throw RpcError(kInternalError, stop ? "the client did not answer " + method + " in time"
                                          : "the request was cancelled while waiting for the client");
    }
  }
  pending_.erase(id.dump());
  if (!pending->error.is_null()) {
    std::string msg = pending->error.is_object() ? pending->error.value("message", "error") : "error";
    throw RpcError(kInternalError, "the client answered " + method + " with an error: " + msg);
  }
  return pending->result;
}

bool LegacySession::Deliver(const Json& id, const Json& result, const Json& error) {
  std::lock_guard lock(mu_);
  auto it = pending_.find(id.dump());
  if (it == pending_.end()) return false;
  it->second->result = result;
  it->second->error = error;
  it->second->done = true;
  cv_.notify_all();
  return true;
}

void LegacySession::SetNotifier(std::function<bool(const Json&)> notifier) {
  std::lock_guard lock(mu_);
  notifier_ = std::move(notifier);
}

bool LegacySession::Notify(const Json& message) {
  std::function<bool(const Json&)> n;
  {
    std::lock_guard lock(mu_);
    n = notifier_;
  }
  return n ? n(message) : false;
}

std::chrono::steady_clock::time_point LegacySession::last_used() const {
  std::lock_guard lock(mu_);
  return last_used_;
}

void LegacySession::Touch() {
  std::lock_guard lock(mu_);
  last_used_ = std::chrono::steady_clock::now();
}

}  // namespace mt::mcp
