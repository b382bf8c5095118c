// A small Prometheus HTTP API client (libcurl): instant and range queries, series, labels,
// label values, metadata and TSDB status. Every call has a connect and a total timeout,
// connection failures are retried with exponential backoff (Prometheus may still be
// opening its blocks), responses larger than a cap are refused instead of buffered, and
// Prometheus's own errors ("bad_data", "timeout", ...) come back as PrometheusError with
// Prometheus's message, so a caller can hand it to the agent unchanged.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "mcp/json.h"

namespace mt::tools {

class PrometheusError : public std::runtime_error {
 public:
  enum class Kind {
    kConnection,   // refused, reset, DNS, after every retry
    kTimeout,      // the HTTP request or Prometheus's query evaluation timed out
    kTooLarge,     // the response exceeded the size cap
    kBadData,      // Prometheus rejected the query (errorType bad_data: PromQL syntax, ...)
    kExecution,    // any other Prometheus errorType (execution, canceled, internal, ...)
    kProtocol,     // not a Prometheus API answer (HTTP status without JSON, bad JSON)
    kAuth,         // HTTP 401/403: the endpoint refused the credentials (or their absence)
    kTls,          // the TLS handshake or the server's certificate failed
  };
  PrometheusError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

struct PrometheusClientOptions {
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds request_timeout{60000};
  int retries = 3;                                   // extra attempts on connection errors
  std::chrono::milliseconds backoff{100};            // doubled after each failed attempt
  std::size_t max_response_bytes = 64u << 20;        // refuse larger bodies (kTooLarge)
  // A remote endpoint (a central Prometheus, Thanos, Mimir, VictoriaMetrics): headers sent
  // with every request (Authorization, X-Scope-OrgID, …; their values are secrets and never
  // appear in an error), TLS settings, and a cap on the samples one answer may carry.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string ca_file;                               // CA bundle (default: the system's)
  std::string client_cert_file, client_key_file;     // TLS client certificate (PEM)
  std::size_t max_samples = 0;                       // 0: no cap (kTooLarge beyond)
};

class PrometheusClient {
 public:
  // `base_url` like "http://127.0.0.1:19600" (no trailing slash needed).
  explicit PrometheusClient(std::string base_url, PrometheusClientOptions options = {});

  const std::string& base_url() const { return base_url_; }
  // The URL as errors show it: user information (https://user:secret@host) masked.
  const std::string& shown_url() const { return shown_url_; }

  // Each returns the API's `data` member. Times are seconds since the epoch.
  // An instant query always carries an explicit time: a finished TSDB has no sample
  // within the lookback delta of "now", so a query without one comes back empty.
  Json Query(const std::string& expr, double time) const;
  Json QueryRange(const std::string& expr, double start, double end, double step_seconds) const;
  Json Series(const std::vector<std::string>& matchers, double start, double end) const;
  Json Labels() const;
  Json LabelValues(const std::string& label) const;
  Json Metadata() const;
  Json TsdbStatus() const;
  Json Flags() const;
  // GET /-/ready once, no retries: true when it answers 200.
  bool Ready() const;

  // Bytes of response bodies received by this client so far (for benchmarks: the size
  // of the raw JSON an agent would have had to read).
  std::uint64_t bytes_received() const { return bytes_received_; }

 private:
  Json Call(const std::string& path, const std::vector<std::pair<std::string, std::string>>& params) const;
  std::string base_url_, shown_url_;
  PrometheusClientOptions options_;
  mutable std::uint64_t bytes_received_ = 0;
};

// "1.5" → "1.5", 1714000000 → "1714000000" (Prometheus accepts float seconds).
std::string PromTime(double seconds);

}  // namespace mt::tools
