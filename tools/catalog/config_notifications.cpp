#include "tools/catalog/config_notifications.h"

#include <set>
#include <stdexcept>

#include "tools/catalog/config_secret.h"

namespace mt::tools {
namespace {

Webhook WebhookFrom(const YAML::Node& n, const std::filesystem::path& base, std::set<std::string>& names) {
  if (!n.IsMap()) throw std::runtime_error("notifications.webhooks: each webhook must be a mapping");
  Webhook w;
  w.name = n["name"].as<std::string>("");
  const std::string at = "webhook '" + w.name + "'";
  if (w.name.empty() || w.name.size() > 64 || w.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != std::string::npos)
    throw std::runtime_error("notifications.webhooks: a name of 1-64 letters, digits, '-' or '_' is required (got '" + w.name + "')");
  if (!names.insert(w.name).second) throw std::runtime_error(at + " is defined twice");
  static const std::set<std::string> known = {"name", "url", "format", "timeout_seconds", "attempts", "backoff_seconds"};
  for (const auto& kv : n)
    if (!known.count(kv.first.as<std::string>())) throw std::runtime_error(at + ": unknown setting '" + kv.first.as<std::string>() + "'");
  if (!n["url"]) throw std::runtime_error(at + ": url is required, as {env: NAME} or {file: PATH}");
  w.url = SecretFrom(n["url"], base, at + ": url");
  if (!w.url.value.empty())
    throw std::runtime_error(at + ": the url is the webhook's secret: give it as {env: NAME} or {file: PATH}, not inline");
  w.format = n["format"].as<std::string>("json");
  if (w.format != "json" && w.format != "slack") throw std::runtime_error(at + ": format must be json or slack");
  w.timeout_seconds = n["timeout_seconds"].as<int>(10);
  w.attempts = n["attempts"].as<int>(3);
  w.backoff_seconds = n["backoff_seconds"].as<double>(1);
  if (w.timeout_seconds < 1 || w.timeout_seconds > 300) throw std::runtime_error(at + ": timeout_seconds must be 1..300");
  if (w.attempts < 1 || w.attempts > 20) throw std::runtime_error(at + ": attempts must be 1..20");
  if (w.backoff_seconds < 0 || w.backoff_seconds > 600) throw std::runtime_error(at + ": backoff_seconds must be 0..600");
  return w;
}

}  // namespace

std::vector<Webhook> WebhooksFromYaml(const YAML::Node& notifications, const std::filesystem::path& base) {
  std::vector<Webhook> out;
  if (!notifications) return out;
  if (!notifications.IsMap()) throw std::runtime_error("notifications must be a mapping with webhooks");
  for (const auto& kv : notifications)
    if (kv.first.as<std::string>() != "webhooks")
      throw std::runtime_error("notifications: unknown setting '" + kv.first.as<std::string>() + "'");
  const YAML::Node hooks = notifications["webhooks"];
  if (!hooks) return out;
  if (!hooks.IsSequence()) throw std::runtime_error("notifications.webhooks must be a list");
  std::set<std::string> names;
  for (const auto& h : hooks) out.push_back(WebhookFrom(h, base, names));
  return out;
}

}  // namespace mt::tools
