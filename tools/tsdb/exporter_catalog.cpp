#include "tools/tsdb/exporter_catalog.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>
#include <stdexcept>

namespace mt::tools {
namespace {

using base::Errc;
using base::Status;

// A scalar or a sequence of scalars as a list ("node: instance" and "node: [Hostname, hostname]").
std::vector<std::string> Strings(const YAML::Node& n) {
  std::vector<std::string> out;
  if (!n) return out;
  if (n.IsScalar()) return {n.as<std::string>()};
  if (n.IsSequence())
    for (const auto& x : n)
      if (x.IsScalar()) out.push_back(x.as<std::string>());
  return out;
}

void Append(std::vector<std::string>& to, const std::vector<std::string>& more) {
  for (const auto& s : more)
    if (std::find(to.begin(), to.end(), s) == to.end()) to.push_back(s);
}

// `metrics:` is a list, or subgroups (bandwidth: [...], state: {metrics: [...]}) in file order.
std::vector<std::string> FamilyMetrics(const YAML::Node& m) {
  if (!m || m.IsSequence()) return Strings(m);
  std::vector<std::string> out;
  if (m.IsMap())
    for (const auto& kv : m) Append(out, kv.second.IsMap() ? Strings(kv.second["metrics"]) : Strings(kv.second));
  return out;
}

// type: counter | {value: "counter (older CSVs) / gauge ..."}; cumulative: true marks gauges
// and untyped series that only grow.
bool Cumulative(const YAML::Node& f) {
  if (f["cumulative"] && f["cumulative"].IsScalar() && f["cumulative"].as<std::string>() == "true") return true;
  const YAML::Node t = f["type"];
  return t && t.IsScalar() && t.as<std::string>() == "counter";
}

ExporterFamily ParseFamily(const std::string& name, const YAML::Node& f, const std::set<std::string>& default_on,
                           const YAML::Node& disabled, const std::map<std::string, std::string>& aliases) {
  ExporterFamily fam;
  fam.name = name;
  for (const auto& m : FamilyMetrics(f["metrics"])) {
    Append(fam.metrics, {m});
    if (auto a = aliases.find(m); a != aliases.end()) Append(fam.metrics, {a->second});   // 4.9 renames
  }
  // node_exporter's newer mlx5 hw_counters (RoCE retransmits, congestion): the same family,
  // read when present (older node_exporter versions lack them).
  Append(fam.metrics, FamilyMetrics(f["hw_counters"]));
  fam.cumulative = Cumulative(f);
  // `default: false` turns it off; any other value (true, or a note on which versions) keeps
  // what the exporter's default_enabled list says.
  const YAML::Node d = f["default"];
  const bool explicitly_off = d && d.IsScalar() && d.as<std::string>() == "false";
  fam.on_by_default = !explicitly_off && (default_on.empty() || default_on.count(name) > 0);
  if (disabled && disabled[name] && disabled[name].IsScalar()) fam.enable_hint = disabled[name].as<std::string>();
  return fam;
}

ExporterSpec ParseExporter(const std::string& id, const YAML::Node& e) {
  ExporterSpec x;
  x.id = id;
  x.detect = Strings(e["detect"]);
  Append(x.detect, Strings(e["detect_4_9_plus"]));
  x.prefixes = e["naming"] ? Strings(e["naming"]["prefixes"]) : std::vector<std::string>{};
  if (x.prefixes.empty()) x.prefixes = {""};
  if (const YAML::Node h = e["host_labels"]) {
    Append(x.host_labels, Strings(h["node"]));
    Append(x.host_labels, Strings(h["node_fallback"]));
  }
  if (x.host_labels.empty()) x.host_labels = {"instance"};
  const auto on = Strings(e["default_enabled"]);
  const std::set<std::string> default_on(on.begin(), on.end());
  std::map<std::string, std::string> aliases;
  if (e["renames_4_9"] && e["renames_4_9"]["verified_aliases"])
    for (const auto& kv : e["renames_4_9"]["verified_aliases"]) aliases[kv.first.as<std::string>()] = kv.second.as<std::string>();
  if (!e["families"] || !e["families"].IsMap()) throw std::runtime_error("has no families mapping");
  for (const auto& kv : e["families"])
    x.families.push_back(ParseFamily(kv.first.as<std::string>(), kv.second, default_on, e["disabled_by_default"], aliases));
  if (x.detect.empty()) throw std::runtime_error("has no detect names");
  return x;
}

}  // namespace

base::Result<std::vector<ExporterSpec>> ParseExporterCatalog(const std::string& yaml) {
  std::vector<ExporterSpec> out;
  std::string where = "exporter catalog";
  try {
    const YAML::Node root = YAML::Load(yaml);
    if (!root["exporters"] || !root["exporters"].IsMap()) return Status(Errc::kInvalid, "exporter catalog: no `exporters` mapping");
    for (const auto& kv : root["exporters"]) {
      where = "exporter catalog: " + kv.first.as<std::string>();
      out.push_back(ParseExporter(kv.first.as<std::string>(), kv.second));
    }
  } catch (const std::exception& e) {
    return Status(Errc::kInvalid, where + ": " + e.what());
  }
  if (out.empty()) return Status(Errc::kInvalid, "exporter catalog: no exporters");
  return out;
}

const std::vector<ExporterSpec>& ExporterCatalog() {
  static const std::vector<ExporterSpec> catalog = [] {
    auto parsed = ParseExporterCatalog(ExporterFamiliesYaml());
    if (!parsed.ok()) throw std::logic_error("configs/exporter_families.yaml as compiled in: " + parsed.message());
    return std::move(*parsed);
  }();
  return catalog;
}

std::vector<DetectedExporter> DetectExporters(const std::vector<std::string>& metric_names,
                                              const std::vector<ExporterSpec>& catalog) {
  const std::set<std::string> names(metric_names.begin(), metric_names.end());
  std::vector<DetectedExporter> out;
  for (const auto& spec : catalog) {
    for (const auto& prefix : spec.prefixes) {
      DetectedExporter d;
      for (const auto& m : spec.detect)
        if (names.count(prefix + m)) d.detected_by.push_back(prefix + m);
      if (d.detected_by.empty()) continue;
      d.id = spec.id;
      d.prefix = prefix;
      d.host_labels = spec.host_labels;
      for (const auto& fam : spec.families) {
        FamilyPresence p{fam.name, {}};
        for (const auto& m : fam.metrics)
          if (names.count(prefix + m)) p.series.push_back(prefix + m);
        if (!p.series.empty()) {
          d.present.push_back(std::move(p));
        } else if (fam.metrics.empty()) {
          d.missing.push_back({fam.name, spec.id + " exports no metric for it"});
        } else if (!fam.on_by_default) {
          d.missing.push_back({fam.name, "off by default in " + spec.id +
                                             (fam.enable_hint.empty() ? "" : ": " + fam.enable_hint)});
        } else {
          d.missing.push_back({fam.name, "on by default in " + spec.id +
                                             " but absent: its collector is disabled, filtered, or this hardware does not report it"});
        }
      }
      out.push_back(std::move(d));
    }
  }
  return out;
}

std::string HostOfInstance(const std::string& instance) {
  if (!instance.empty() && instance.front() == '[') {   // [v6 address]:port
    const auto close = instance.find(']');
    return close == std::string::npos ? instance : instance.substr(1, close - 1);
  }
  const auto colon = instance.rfind(':');
  if (colon == std::string::npos || instance.find(':') != colon) return instance;   // no port, or bare v6
  const std::string port = instance.substr(colon + 1);
  const bool numeric = !port.empty() && std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
  return numeric ? instance.substr(0, colon) : instance;
}

}  // namespace mt::tools
