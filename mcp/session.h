// A legacy-era session (one per stdio process, one per HTTP Mcp-Session-Id): what was
// negotiated in `initialize`, the log level, resource subscriptions, requests in flight
// (for `notifications/cancelled`), and the server→client requests awaiting an answer.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "mcp/channel.h"
#include "mcp/json.h"
#include "mcp/protocol.h"

namespace mt::mcp {

using CancelFlag = std::shared_ptr<std::atomic<bool>>;

// Requests being handled, by id, so a cancellation can reach them.
class InFlight {
 public:
  CancelFlag Begin(const Json& id);
  void End(const Json& id);
  void Cancel(const Json& id);
  void CancelAll();

 private:
  std::mutex mu_;
  std::map<std::string, CancelFlag> by_id_;   // key: id.dump()
};

class LegacySession {
 public:
  explicit LegacySession(std::string id) : id_(std::move(id)) {}

  const std::string& id() const { return id_; }

  // Set once by `initialize`.
  void Initialize(std::string version, Json client_capabilities, Json client_info);
  bool initialized() const { return initialized_.load(); }
  std::string protocol_version() const;
  Json client_capabilities() const;

  void SetLogLevel(LogLevel level) { log_level_.store(static_cast<int>(level)); }
  LogLevel log_level() const { return static_cast<LogLevel>(log_level_.load()); }

  void Subscribe(const std::string& uri);
  void Unsubscribe(const std::string& uri);
  bool IsSubscribed(const std::string& uri) const;

  InFlight& in_flight() { return in_flight_; }

  // Sends `method` to the client on `channel` and waits for its answer. Throws RpcError
  // when the client answers with an error, on timeout, or when `cancel` is raised.
  Json Request(Channel& channel, const std::string& method, Json params, std::chrono::milliseconds timeout,
               const std::function<bool()>& cancelled);
  // A response the transport received; false if nothing was waiting for that id.
  bool Deliver(const Json& id, const Json& result, const Json& error);

  // Where unsolicited notifications (list_changed, resources/updated) go: stdout on
  // stdio, the GET stream on HTTP. Null when there is none right now.
  void SetNotifier(std::function<bool(const Json&)> notifier);
  bool Notify(const Json& message);

  std::chrono::steady_clock::time_point last_used() const;
  void Touch();

 private:
  struct Pending {
    bool done = false;
    Json result;
    Json error;
  };

  const std::string id_;
  std::atomic<bool> initialized_{false};
  std::atomic<int> log_level_{static_cast<int>(LogLevel::kDebug)};
  mutable std::mutex mu_;
  std::string version_;
  Json client_capabilities_ = Json::object();
  Json client_info_;
  std::set<std::string> subscriptions_;
  std::function<bool(const Json&)> notifier_;
  std::condition_variable cv_;
  std::map<std::string, std::shared_ptr<Pending>> pending_;
  uint64_t next_request_ = 1;
  std::chrono::steady_clock::time_point last_used_ = std::chrono::steady_clock::now();
  InFlight in_flight_;
};

}  // namespace mt::mcp
