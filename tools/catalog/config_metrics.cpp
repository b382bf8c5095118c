#include "tools/catalog/config_metrics.h"

#include <set>
#include <stdexcept>

#include "tools/catalog/config_secret.h"

namespace mt::tools {
namespace {

MetricsSource SourceFrom(const YAML::Node& n, const std::filesystem::path& base) {
  if (!n.IsMap()) throw std::runtime_error("metrics.sources: each source must be a mapping");
  MetricsSource s;
  s.name = n["name"].as<std::string>("");
  const std::string at = "metrics source '" + s.name + "'";
  static const std::set<std::string> known = {"name", "url", "bearer_token", "basic_auth", "headers", "ca_file",
                                              "client_cert_file", "client_key_file", "timeout_seconds", "max_samples"};
  for (const auto& kv : n)
    if (!known.count(kv.first.as<std::string>()))
      throw std::runtime_error(at + ": unknown setting '" + kv.first.as<std::string>() + "'");
  s.url = n["url"].as<std::string>("");
  s.bearer_token = SecretFrom(n["bearer_token"], base, at + ": bearer_token");
  if (auto b = n["basic_auth"]) {
    if (!b.IsMap()) throw std::runtime_error(at + ": basic_auth must be a mapping with user and password");
    s.basic_auth_user = b["user"].as<std::string>("");
    if (s.basic_auth_user.empty()) throw std::runtime_error(at + ": basic_auth needs a user");
    s.basic_auth_password = SecretFrom(b["password"], base, at + ": basic_auth.password");
  }
  if (auto h = n["headers"]) {
    if (!h.IsMap()) throw std::runtime_error(at + ": headers must be a mapping of header name to value");
    for (const auto& kv : h)
      s.headers.emplace_back(kv.first.as<std::string>(), SecretFrom(kv.second, base, at + ": header " + kv.first.as<std::string>()));
  }
  s.ca_file = PathIn(n["ca_file"], base);
  s.client_cert_file = PathIn(n["client_cert_file"], base);
  s.client_key_file = PathIn(n["client_key_file"], base);
  if (auto t = n["timeout_seconds"]) s.timeout_seconds = t.as<int>();
  if (auto m = n["max_samples"]) s.max_samples = m.as<std::size_t>();
  if (std::string problem = CheckMetricsSource(s); !problem.empty()) throw std::runtime_error(problem);
  return s;
}

}  // namespace

std::vector<MetricsSource> MetricsSourcesFromYaml(const YAML::Node& metrics, const std::filesystem::path& base) {
  std::vector<MetricsSource> out;
  if (!metrics) return out;
  if (!metrics.IsMap()) throw std::runtime_error("metrics must be a mapping");
  const YAML::Node sources = metrics["sources"];
  if (!sources) return out;
  if (!sources.IsSequence()) throw std::runtime_error("metrics.sources must be a list");
  std::set<std::string> names;
  for (const auto& n : sources) {
    MetricsSource s = SourceFrom(n, base);
    if (!names.insert(s.name).second) throw std::runtime_error("metrics source '" + s.name + "' is configured twice");
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace mt::tools
