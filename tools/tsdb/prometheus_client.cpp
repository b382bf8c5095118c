#include "tools/tsdb/prometheus_client.h"

#include <curl/curl.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>

namespace mt::tools {
namespace {

void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Body {
  std::string data;
  std::size_t cap = 0;
  bool overflow = false;
};

size_t OnData(char* ptr, size_t size, size_t nmemb, void* user) {
  auto* body = static_cast<Body*>(user);
  size_t n = size * nmemb;
  if (body->data.size() + n > body->cap) {
    body->overflow = true;
    return 0;   // aborts the transfer with CURLE_WRITE_ERROR
  }
  body->data.append(ptr, n);
  return n;
}

std::string Escape(CURL* curl, const std::string& s) {
  char* e = curl_easy_escape(curl, s.data(), static_cast<int>(s.size()));
  std::string out = e ? e : "";
  curl_free(e);
  return out;
}

struct Response {
  long status = 0;
  std::string body;
};

bool IsTlsError(CURLcode rc) {
  return rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CERTPROBLEM ||
         rc == CURLE_SSL_CIPHER || rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_ISSUER_ERROR ||
         rc == CURLE_SSL_ENGINE_NOTFOUND || rc == CURLE_SSL_ENGINE_SETFAILED || rc == CURLE_USE_SSL_FAILED ||
         rc == CURLE_SSL_CRL_BADFILE || rc == CURLE_SSL_PINNEDPUBKEYNOTMATCH || rc == CURLE_SSL_INVALIDCERTSTATUS;
}

// https://user:secret@host:9090 → https://***@host:9090
std::string MaskUserInfo(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  const size_t end = url.find_first_of("/?#", start);
  const size_t at = url.rfind('@', end == std::string::npos ? url.size() : end);
  if (at == std::string::npos || at < start) return url;
  return url.substr(0, start) + "***" + url.substr(at);
}

bool IsLoopback(const std::string& url) {
  const size_t scheme = url.find("://");
  std::string rest = url.substr(scheme == std::string::npos ? 0 : scheme + 3);
  return rest.starts_with("127.") || rest.starts_with("localhost") || rest.starts_with("[::1]");
}

// Samples in a query answer: points of a matrix, one per element of a vector.
std::size_t SampleCount(const Json& data) {
  if (!data.is_object() || !data.contains("result") || !data["result"].is_array()) return 0;
  const std::string type = data.value("resultType", "");
  std::size_t n = 0;
  for (const auto& r : data["result"]) {
    if (type == "matrix") {
      if (r.contains("values") && r["values"].is_array()) n += r["values"].size();
      if (r.contains("histograms") && r["histograms"].is_array()) n += r["histograms"].size();
    } else {
      ++n;
    }
  }
  return n;
}

// A body excerpt safe to show: control bytes and non-ASCII as '.'.
std::string Printable(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '.';
  return out;
}

bool IsConnectionError(CURLcode rc) {
  return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST || rc == CURLE_RECV_ERROR ||
         rc == CURLE_SEND_ERROR || rc == CURLE_GOT_NOTHING;
}

}  // namespace

std::string PromTime(double seconds) {
  char buf[64];
  if (std::floor(seconds) == seconds) std::snprintf(buf, sizeof buf, "%.0f", seconds);
  else std::snprintf(buf, sizeof buf, "%.3f", seconds);
  return buf;
}

PrometheusClient::PrometheusClient(std::string base_url, PrometheusClientOptions options)
    : base_url_(std::move(base_url)), options_(std::move(options)) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
  shown_url_ = MaskUserInfo(base_url_);
  GlobalInitOnce();
}

Json PrometheusClient::Call(const std::string& path,
                            const std::vector<std::pair<std::string, std::string>>& params) const {
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) throw PrometheusError(PrometheusError::Kind::kConnection, "libcurl: cannot create a handle");
  // POST with a form body: long PromQL (big host regexes) never hits URL length limits,
  // and every query endpoint of the API accepts it. GET for the rest.
  std::string form;
  for (const auto& [k, v] : params) {
    if (!form.empty()) form += '&';
    form += Escape(curl.get(), k) + "=" + Escape(curl.get(), v);
  }
  const bool post = !params.empty();
  const std::string url = base_url_ + path;
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> headers(nullptr, curl_slist_free_all);
  for (const auto& [name, value] : options_.headers) {
    curl_slist* grown = curl_slist_append(headers.get(), (name + ": " + value).c_str());
    if (!grown) throw PrometheusError(PrometheusError::Kind::kConnection, "libcurl: cannot add a request header");
    (void)headers.release();
    headers.reset(grown);
  }

  std::chrono::milliseconds delay = options_.backoff;
  for (int attempt = 0;; ++attempt) {
    Body body;
    body.cap = options_.max_response_bytes;
    curl_easy_reset(curl.get());
    curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl.get(), CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
    curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(options_.request_timeout.count()));
    curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, OnData);
    curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(curl.get(), CURLOPT_ACCEPT_ENCODING, "");   // gzip: JSON matrices compress ~10x
    if (IsLoopback(base_url_)) curl_easy_setopt(curl.get(), CURLOPT_PROXY, "");   // loopback: never through a proxy
    if (headers) curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers.get());
    if (!options_.ca_file.empty()) curl_easy_setopt(curl.get(), CURLOPT_CAINFO, options_.ca_file.c_str());
    if (!options_.client_cert_file.empty()) curl_easy_setopt(curl.get(), CURLOPT_SSLCERT, options_.client_cert_file.c_str());
    if (!options_.client_key_file.empty()) curl_easy_setopt(curl.get(), CURLOPT_SSLKEY, options_.client_key_file.c_str());
    // Credentials go to the configured host only, never to where a redirect points.
    curl_easy_setopt(curl.get(), CURLOPT_FOLLOWLOCATION, 0L);
    if (post) {
      curl_easy_setopt(curl.get(), CURLOPT_POST, 1L);
      curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDS, form.c_str());
      curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(form.size()));
    }
    CURLcode rc = curl_easy_perform(curl.get());
    bytes_received_ += body.data.size();
    if (body.overflow)
      throw PrometheusError(PrometheusError::Kind::kTooLarge,
                            "the Prometheus answer exceeds " + std::to_string(options_.max_response_bytes >> 20) +
                                " MiB; narrow the selector, aggregate (sum/avg by (host)) or use a coarser step");
    if (rc == CURLE_OPERATION_TIMEDOUT)
      throw PrometheusError(PrometheusError::Kind::kTimeout,
                            "Prometheus at " + shown_url_ + " did not answer " + path + " within " +
                                std::to_string(options_.request_timeout.count()) + " ms");
    if (IsTlsError(rc))
      throw PrometheusError(PrometheusError::Kind::kTls, "TLS with " + shown_url_ + " failed: " + curl_easy_strerror(rc) +
                                                             " (check the source's ca_file and client certificate)");
    if (rc != CURLE_OK) {
      if (IsConnectionError(rc) && attempt < options_.retries) {
        std::this_thread::sleep_for(delay);
        delay *= 2;
        continue;
      }
      throw PrometheusError(PrometheusError::Kind::kConnection,
                            "cannot reach Prometheus at " + shown_url_ + ": " + curl_easy_strerror(rc) + " (after " +
                                std::to_string(attempt + 1) + " attempts)");
    }
    long status = 0;
    curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
    if (status == 401 || status == 403)
      throw PrometheusError(PrometheusError::Kind::kAuth,
                            "Prometheus at " + shown_url_ + " refused the request: HTTP " + std::to_string(status) +
                                (status == 401 ? " (no or wrong credentials: check the source's bearer_token / basic_auth)"
                                               : " (the credentials may not read this API or tenant)"));
    Json j = Json::parse(body.data, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw PrometheusError(PrometheusError::Kind::kProtocol,
                            shown_url_ + path + " answered HTTP " + std::to_string(status) +
                                " without a JSON body: is it a Prometheus HTTP API? (" +
                                std::to_string(body.data.size()) + " bytes, starting " + Printable(body.data.substr(0, 80)) + ")");
    if (!j.contains("status"))
      throw PrometheusError(PrometheusError::Kind::kProtocol,
                            shown_url_ + path + " answered JSON without a `status`: not a Prometheus HTTP API");
    if (j.value("status", "") != "success") {
      std::string type = j.value("errorType", "unknown");
      std::string msg = j.value("error", "no message");
      auto kind = type == "bad_data" ? PrometheusError::Kind::kBadData
                  : type == "timeout" ? PrometheusError::Kind::kTimeout
                                      : PrometheusError::Kind::kExecution;
      throw PrometheusError(kind, "Prometheus " + type + ": " + msg);
    }
    if (options_.max_samples > 0) {
      const std::size_t samples = j.contains("data") ? SampleCount(j["data"]) : 0;
      if (samples > options_.max_samples)
        throw PrometheusError(PrometheusError::Kind::kTooLarge,
                              "the answer holds " + std::to_string(samples) + " samples, more than this source's max_samples (" +
                                  std::to_string(options_.max_samples) +
                                  "); narrow the selector or window, aggregate (sum/avg by (host)) or use a coarser step");
    }
    return j.contains("data") ? j["data"] : Json();
  }
}

Json PrometheusClient::Query(const std::string& expr, double time) const {
  return Call("/api/v1/query", {{"query", expr}, {"time", PromTime(time)}});
}

Json PrometheusClient::QueryRange(const std::string& expr, double start, double end, double step_seconds) const {
  return Call("/api/v1/query_range",
              {{"query", expr}, {"start", PromTime(start)}, {"end", PromTime(end)}, {"step", PromTime(step_seconds)}});
}

Json PrometheusClient::Series(const std::vector<std::string>& matchers, double start, double end) const {
  std::vector<std::pair<std::string, std::string>> p;
  for (const auto& m : matchers) p.emplace_back("match[]", m);
  p.emplace_back("start", PromTime(start));
  p.emplace_back("end", PromTime(end));
  return Call("/api/v1/series", p);
}

Json PrometheusClient::Labels() const { return Call("/api/v1/labels", {}); }

Json PrometheusClient::LabelValues(const std::string& label) const {
  // Label names are [a-zA-Z_][a-zA-Z0-9_]*; refuse anything else instead of building a path.
  for (char c : label)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      throw PrometheusError(PrometheusError::Kind::kBadData, "invalid label name '" + label + "'");
  return Call("/api/v1/label/" + label + "/values", {});
}

Json PrometheusClient::Metadata() const { return Call("/api/v1/metadata", {}); }
Json PrometheusClient::TsdbStatus() const { return Call("/api/v1/status/tsdb", {}); }
Json PrometheusClient::Flags() const { return Call("/api/v1/status/flags", {}); }

bool PrometheusClient::Ready() const {
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return false;
  Body body;
  body.cap = 1 << 16;
  std::string url = base_url_ + "/-/ready";
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_CONNECTTIMEOUT_MS, 500L);
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, 2000L);
  curl_easy_setopt(curl.get(), CURLOPT_PROXY, "");
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, OnData);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &body);
  if (curl_easy_perform(curl.get()) != CURLE_OK) return false;
  long status = 0;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
  return status == 200;
}

}  // namespace mt::tools
