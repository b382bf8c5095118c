// A Prometheus-compatible endpoint the cluster already runs (a central Prometheus, Thanos,
// Mimir, VictoriaMetrics), configured in mt.yaml under `metrics.sources` and named by
// query_tsdb's `source`. Secrets (bearer token, basic-auth password, secret header values)
// are never in the file itself: each comes from an environment variable or a file, read when
// a query is made, and never appears in an answer, an error or a log.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tools/common/secret_ref.h"
#include "tools/tsdb/prometheus_client.h"

namespace mt::tools {

struct MetricsSource {
  std::string name;                // what query_tsdb's `source` names
  std::string url;                 // http(s)://host:port[/prefix] of the Prometheus HTTP API
  SecretRef bearer_token;          // Authorization: Bearer …
  std::string basic_auth_user;     // Authorization: Basic … with basic_auth_password
  SecretRef basic_auth_password;
  std::vector<std::pair<std::string, SecretRef>> headers;   // e.g. X-Scope-OrgID (Mimir tenants)
  std::filesystem::path ca_file, client_cert_file, client_key_file;
  int timeout_seconds = 30;        // per request, connection included
  std::size_t max_samples = 5000000;   // per answer
};

// Checks a source as loaded from the file (name, URL scheme, one origin per secret, limits);
// returns "" or the problem, naming the source and the setting.
std::string CheckMetricsSource(const MetricsSource& source);

// The client options for a source, its secrets read now. Throws std::runtime_error naming the
// source and the variable or file that is missing, unreadable or empty (never the secret).
PrometheusClientOptions ClientOptionsFor(const MetricsSource& source);

// The source called `name`; throws std::invalid_argument listing the configured names.
const MetricsSource& FindMetricsSource(const std::vector<MetricsSource>& sources, const std::string& name);

}  // namespace mt::tools
