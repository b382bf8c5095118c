#include "tools/tsdb/metrics_source.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "mcp/base64.h"

namespace mt::tools {
namespace {

// The secret's value, read now; the error names where it should have come from, never what it is.
std::string Resolve(const MetricsSource& s, const std::string& what, const SecretRef& r) {
  return ReadSecret(r, "metrics source '" + s.name + "': " + what);
}

bool HeaderNameOk(const std::string& n) {
  if (n.empty()) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) return false;
  return true;
}

}  // namespace

std::string CheckMetricsSource(const MetricsSource& s) {
  const std::string at = "metrics source '" + s.name + "': ";
  if (s.name.empty()) return "metrics source without a name";
  for (char c : s.name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      return "metrics source name '" + s.name + "': use letters, digits, '-', '_' or '.'";
  if (s.name == "per_job") return "metrics source name 'per_job' is reserved for the job's own TSDB";
  if (!s.url.starts_with("http://") && !s.url.starts_with("https://")) return at + "url must start with http:// or https://";
  for (const auto& [what, ref] : {std::pair<std::string, const SecretRef*>{"bearer_token", &s.bearer_token},
                                  {"basic_auth.password", &s.basic_auth_password}}) {
    if (!ref->value.empty()) return at + what + " is a secret: give it as env or file, not inline";
    if (std::string e = SecretOrigins(*ref); !e.empty()) return at + what + ": " + e;
  }
  if (!s.bearer_token.empty() && !s.basic_auth_user.empty()) return at + "give bearer_token or basic_auth, not both";
  if (!s.basic_auth_user.empty() && s.basic_auth_password.empty()) return at + "basic_auth needs a password (env or file)";
  for (const auto& [name, ref] : s.headers) {
    if (!HeaderNameOk(name)) return at + "header name '" + name + "' is not a token";
    if (name == "Authorization" || name == "authorization")
      return at + "give Authorization through bearer_token or basic_auth, so it is never inline";
    if (ref.empty()) return at + "header " + name + " has no value (value, env or file)";
    if (std::string e = SecretOrigins(ref); !e.empty()) return at + "header " + name + ": " + e;
  }
  if (s.client_cert_file.empty() != s.client_key_file.empty())
    return at + "client_cert_file and client_key_file go together";
  if (s.timeout_seconds < 1 || s.timeout_seconds > 600) return at + "timeout_seconds must be 1..600";
  if (s.max_samples < 1000 || s.max_samples > 500000000) return at + "max_samples must be 1000..500000000";
  return "";
}

PrometheusClientOptions ClientOptionsFor(const MetricsSource& s) {
  PrometheusClientOptions o;
  o.request_timeout = std::chrono::seconds(s.timeout_seconds);
  o.connect_timeout = std::min<std::chrono::milliseconds>(o.request_timeout, std::chrono::seconds(10));
  o.retries = 1;   // a remote endpoint is up or not; it is not still opening its blocks
  o.max_samples = s.max_samples;
  if (!s.bearer_token.empty()) o.headers.emplace_back("Authorization", "Bearer " + Resolve(s, "bearer_token", s.bearer_token));
  if (!s.basic_auth_user.empty())
    o.headers.emplace_back("Authorization", "Basic " + mcp::Base64Encode(s.basic_auth_user + ":" +
                                                                         Resolve(s, "basic_auth.password", s.basic_auth_password)));
  for (const auto& [name, ref] : s.headers) {
    std::string v = Resolve(s, "header " + name, ref);
    if (v.find_first_of("\r\n") != std::string::npos) throw std::runtime_error("metrics source '" + s.name + "': header " + name + " spans lines");
    o.headers.emplace_back(name, std::move(v));
  }
  o.ca_file = s.ca_file.string();
  o.client_cert_file = s.client_cert_file.string();
  o.client_key_file = s.client_key_file.string();
  return o;
}

const MetricsSource& FindMetricsSource(const std::vector<MetricsSource>& sources, const std::string& name) {
  for (const auto& s : sources)
    if (s.name == name) return s;
  std::string names;
  for (const auto& s : sources) names += (names.empty() ? "" : ", ") + s.name;
  throw std::invalid_argument("source: no metrics source '" + name + "' is configured (" +
                              (names.empty() ? std::string("mt.yaml has no metrics.sources") : "configured: " + names) + ")");
}

}  // namespace mt::tools
