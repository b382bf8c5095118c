// Notifications of a supervised run (state changes, a hang, a decision, a restart waiting
// for approval) to webhooks: a generic JSON POST, or Slack's `{"text": …}` — a Telegram-style
// bot URL works through the same mechanism. The URL is the secret (Slack and Telegram put
// their tokens in it): it comes from an environment variable or a file, and appears in no
// error, log or answer.
//
// Delivery goes through an outbox on disk (<dir>/outbox.jsonl, one notice per line, and per
// webhook the number of notices it acknowledged): a notice is appended first, then posted
// to each webhook in order, each acknowledgement recorded before the next notice is posted.
// A restarted watch resumes where the last one stopped, so every notice reaches every webhook
// once; only a process that dies between a receiver's 2xx and the record sends that notice
// again, with the same `Idempotency-Key` header (the notice's id) for the receiver to drop.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"
#include "mcp/json.h"
#include "tools/common/secret_ref.h"

namespace mt::tools {

struct Webhook {
  std::string name;                // letters, digits, '-', '_' (names its acknowledgement file)
  SecretRef url;                   // env or file: http(s) URL
  std::string format = "json";     // json | slack
  int timeout_seconds = 10;        // per attempt, connection included
  int attempts = 3;                // per notice, per Deliver call
  double backoff_seconds = 1;      // before the 2nd attempt, doubled after each
};

struct Notice {
  std::string id;                  // assigned by Outbox::Add: unique per outbox
  int64_t time = 0;                // seconds since the epoch
  std::string job, kind;           // kind: state | hang | degraded | decision | pending_approval | restarted | ...
  std::string text;                // one line for people
  Json detail = Json::object();
};

// The body posted for `n`: the notice itself (json), or {"text": "[mt] job J: kind — text"} (slack).
Json WebhookPayload(const Webhook& hook, const Notice& n);

// One POST of `n` to `url`: Ok on a 2xx answer, else the error (the webhook's name and the
// HTTP status or the transport's error; never the URL). Redirects are not followed.
base::Status PostNotice(const Webhook& hook, const std::string& url, const Notice& n);

class Outbox {
 public:
  explicit Outbox(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // Appends `n` (its id and time filled in when empty). Fails closed: a notice not on disk
  // is reported as an error, never posted.
  base::Status Add(Notice n, std::string* id = nullptr);
  // Every notice, oldest first.
  base::Status Read(std::vector<Notice>* out) const;
  // The notices `hook` has not acknowledged.
  base::Status Pending(const Webhook& hook, std::vector<Notice>* out) const;
  // Posts them in order (each up to hook.attempts times with back-off) and records each
  // acknowledgement; stops at a notice that fails every attempt, leaving it and the later
  // ones pending. `delivered` counts the notices acknowledged by this call.
  base::Status Deliver(const Webhook& hook, int* delivered);

 private:
  std::filesystem::path Acked(const Webhook& hook) const;
  base::Status AckedCount(const Webhook& hook, size_t* n) const;
  // Pending(), with the acknowledged count it started from.
  base::Status PendingFrom(const Webhook& hook, std::vector<Notice>* out, size_t* acked) const;
  std::filesystem::path dir_;
};

}  // namespace mt::tools
