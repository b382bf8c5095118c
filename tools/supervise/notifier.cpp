#include "tools/supervise/notifier.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>
#include <mutex>
#include <thread>

#include "base/append_file.h"
#include "base/atomic_file.h"

namespace mt::tools {
namespace {

bool NameOk(const std::string& n) {
  return !n.empty() && n.size() <= 64 &&
         std::all_of(n.begin(), n.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; });
}

size_t Discard(char*, size_t size, size_t n, void*) { return size * n; }

Json ToJson(const Notice& n) {
  return {{"id", n.id}, {"time", n.time}, {"job", n.job}, {"kind", n.kind}, {"text", n.text}, {"detail", n.detail}};
}

bool FromJson(const Json& j, Notice* n) {
  if (!j.is_object() || !j.contains("id") || !j["id"].is_string() || !j.contains("time") || !j["time"].is_number_integer())
    return false;
  n->id = j["id"];
  n->time = j["time"];
  n->job = j.value("job", "");
  n->kind = j.value("kind", "");
  n->text = j.value("text", "");
  n->detail = j.value("detail", Json::object());
  return true;
}

int64_t Now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

Json WebhookPayload(const Webhook& hook, const Notice& n) {
  if (hook.format == "slack") return {{"text", "[mt] job " + n.job + ": " + n.kind + " — " + n.text}};
  return ToJson(n);
}

base::Status PostNotice(const Webhook& hook, const std::string& url, const Notice& n) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  const std::string where = "webhook '" + hook.name + "'";
  if (!url.starts_with("http://") && !url.starts_with("https://"))
    return base::Status(base::Errc::kInvalid, where + ": its URL must start with http:// or https://");
  CURL* curl = curl_easy_init();
  if (!curl) return base::Status(base::Errc::kFailed, where + ": cannot start libcurl");
  const std::string body = WebhookPayload(hook, n).dump(-1, ' ', false, Json::error_handler_t::replace);
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  headers = curl_slist_append(headers, ("Idempotency-Key: " + n.id).c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, static_cast<long>(hook.timeout_seconds));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, static_cast<long>(hook.timeout_seconds));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);   // the token goes to the configured host only
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Discard);
  const CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  // curl's own text only (never its error buffer, which may quote the URL)
  if (rc != CURLE_OK) return base::Status(base::Errc::kFailed, where + ": " + curl_easy_strerror(rc));
  if (status < 200 || status >= 300)
    return base::Status(base::Errc::kFailed, where + ": the receiver answered HTTP " + std::to_string(status));
  return base::Status::Ok();
}

base::Status Outbox::Add(Notice n, std::string* id) {
  std::vector<Notice> all;
  if (base::Status st = Read(&all); !st.ok()) return st;
  if (n.id.empty()) n.id = (n.job.empty() ? "mt" : n.job) + "-" + std::to_string(all.size() + 1) + "-" + std::to_string(Now());
  if (n.time == 0) n.time = Now();
  if (id) *id = n.id;
  return base::AppendLocked(dir_ / "outbox.jsonl", ToJson(n).dump(-1, ' ', false, Json::error_handler_t::replace) + "\n",
                            "notification outbox");
}

base::Status Outbox::Read(std::vector<Notice>* out) const {
  out->clear();
  std::error_code ec;
  if (!std::filesystem::exists(dir_ / "outbox.jsonl", ec)) return base::Status::Ok();
  std::ifstream in(dir_ / "outbox.jsonl", std::ios::binary);
  if (!in) return base::Status(base::Errc::kIo, "cannot read the notification outbox " + (dir_ / "outbox.jsonl").string());
  for (std::string line; std::getline(in, line);) {
    Notice n;
    if (!line.empty() && FromJson(Json::parse(line, nullptr, false), &n)) out->push_back(std::move(n));
  }
  return base::Status::Ok();
}

std::filesystem::path Outbox::Acked(const Webhook& hook) const { return dir_ / ("acked-" + hook.name + ".txt"); }

base::Status Outbox::AckedCount(const Webhook& hook, size_t* n) const {
  *n = 0;
  std::ifstream in(Acked(hook));
  if (in && !(in >> *n)) return base::Status(base::Errc::kIo, "unreadable " + Acked(hook).string());
  return base::Status::Ok();
}

base::Status Outbox::Pending(const Webhook& hook, std::vector<Notice>* out) const {
  size_t acked = 0;
  return PendingFrom(hook, out, &acked);
}

base::Status Outbox::PendingFrom(const Webhook& hook, std::vector<Notice>* out, size_t* acked) const {
  if (!NameOk(hook.name)) return base::Status(base::Errc::kInvalid, "webhook name '" + hook.name + "': use letters, digits, '-', '_'");
  std::vector<Notice> all;
  if (base::Status st = Read(&all); !st.ok()) return st;
  if (base::Status st = AckedCount(hook, acked); !st.ok()) return st;
  out->assign(all.begin() + static_cast<std::ptrdiff_t>(std::min(*acked, all.size())), all.end());
  return base::Status::Ok();
}

base::Status Outbox::Deliver(const Webhook& hook, int* delivered) {
  *delivered = 0;
  std::vector<Notice> pending;
  size_t acked = 0;
  if (base::Status st = PendingFrom(hook, &pending, &acked); !st.ok()) return st;
  if (pending.empty()) return base::Status::Ok();
  std::string url;
  try {
    url = ReadSecret(hook.url, "webhook '" + hook.name + "': url");
  } catch (const std::exception& e) {
    return base::Status(base::Errc::kInvalid, e.what());
  }
  for (const Notice& n : pending) {
    base::Status last;
    double wait = hook.backoff_seconds;
    for (int attempt = 1; attempt <= std::max(1, hook.attempts); ++attempt) {
      last = PostNotice(hook, url, n);
      if (last.ok()) break;
      if (attempt < hook.attempts) std::this_thread::sleep_for(std::chrono::duration<double>(wait)), wait *= 2;
    }
    if (!last.ok())
      return base::Status(last.code(), last.message() + " (notice " + n.id + " and " + std::to_string(pending.size() - *delivered - 1) +
                                           " later ones stay pending)");
    ++acked;
    if (base::Status st = base::WriteFileAtomic(Acked(hook), std::to_string(acked) + "\n"); !st.ok()) return st;
    ++*delivered;
  }
  return base::Status::Ok();
}

}  // namespace mt::tools
