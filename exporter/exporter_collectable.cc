#include "exporter/exporter_collectable.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <unordered_map>

#include "exporter/metric_sink.h"
#include "exporter/version.h"

namespace mt::exporter {

namespace {

using Labels = std::vector<prometheus::ClientMetric::Label>;

Labels Sorted(Labels l) {
  std::sort(l.begin(), l.end());
  return l;
}

}  // namespace

size_t MergeFamilies(std::vector<prometheus::MetricFamily>& families,
                     std::vector<prometheus::MetricFamily> extra) {
  size_t dropped = 0;
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < families.size(); ++i) index.emplace(families[i].name, i);
  for (auto& f : extra) {
    auto it = index.find(f.name);
    if (it == index.end()) {
      index.emplace(f.name, families.size());
      families.push_back(std::move(f));
      continue;
    }
    prometheus::MetricFamily& into = families[it->second];
    if (into.type != f.type) {
      dropped += f.metric.size();
      continue;
    }
    std::set<Labels> series;
    for (const auto& m : into.metric) series.insert(Sorted(m.label));
    for (auto& m : f.metric) {
      if (!series.insert(Sorted(m.label)).second) {
        ++dropped;
        continue;
      }
      into.metric.push_back(std::move(m));
    }
  }
  return dropped;
}

ExporterCollectable::ExporterCollectable(std::string host,
                                         std::vector<std::unique_ptr<Collector>> collectors,
                                         const PluginRunner* plugins)
    : host_(std::move(host)), collectors_(std::move(collectors)), plugins_(plugins) {}

std::vector<prometheus::MetricFamily> ExporterCollectable::Collect() const {
  std::lock_guard lock(mu_);
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();

  MetricSink sink(host_);
  struct Timing {
    std::string_view name;
    double seconds;
    bool ok;
  };
  std::vector<Timing> timings;
  timings.reserve(collectors_.size());
  for (const auto& c : collectors_) {
    auto start = Clock::now();
    bool ok = c->Collect(sink);
    timings.push_back({c->name(), std::chrono::duration<double>(Clock::now() - start).count(), ok});
  }
  double native_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  std::vector<prometheus::MetricFamily> families = sink.Take();

  MetricSink self(host_);
  self.Gauge("hw_scrape_duration_seconds",
             "Time the native collectors took for this scrape, seconds.", {}, native_seconds);
  for (const auto& t : timings) {
    self.Gauge("mt_exporter_collector_duration_seconds", "Time one native collector took, seconds.",
               {{"collector", t.name}}, t.seconds);
    self.Gauge("mt_exporter_collector_success", "1 if the collector read its source without error.",
               {{"collector", t.name}}, t.ok ? 1.0 : 0.0);
  }
  if (plugins_ != nullptr) {
    for (auto& p : plugins_->Snapshot()) {
      LabelPairs l{{"plugin", p.name}};
      size_t dropped = MergeFamilies(families, std::move(p.families));
      self.Counter("mt_exporter_plugin_errors_total", "Plugin output lines dropped as invalid.", l,
                   static_cast<double>(p.invalid_lines));
      self.Counter("mt_exporter_plugin_timeouts_total", "Plugin runs killed at the timeout.", l,
                   static_cast<double>(p.timeouts));
      self.Counter("mt_exporter_plugin_runs_total", "Plugin runs.", l, static_cast<double>(p.runs));
      self.Gauge("mt_exporter_plugin_duration_seconds", "Wall time of the plugin's last run, seconds.", l,
                 p.last_seconds);
      self.Gauge("mt_exporter_plugin_exit_code", "Exit code of the plugin's last run (124 = timed out).", l,
                 p.last_exit);
      self.Gauge("mt_exporter_plugin_disabled", "1 once the plugin exited 99 (disabled for the exporter's life).",
                 l, p.disabled ? 1.0 : 0.0);
      self.Counter("mt_exporter_plugin_dropped_bytes_total",
                   "Plugin stdout bytes dropped over the per-run limit (--plugin-max-bytes).", l,
                   static_cast<double>(p.dropped_bytes));
      self.Counter("mt_exporter_plugin_dropped_series_total",
                   "Plugin samples dropped over the per-run series limit (--plugin-max-series).", l,
                   static_cast<double>(p.dropped_series));
      self.Counter("mt_exporter_plugin_stderr_dropped_bytes_total",
                   "Plugin stderr bytes not logged, over the per-run limit (--plugin-max-stderr).", l,
                   static_cast<double>(p.stderr_dropped_bytes));
      self.Counter("mt_exporter_plugin_escaped_killed_total",
                   "Processes the plugin left running outside its process group (setsid), killed after its run.", l,
                   static_cast<double>(p.escaped_killed));
      self.Gauge("mt_exporter_plugin_conflicting_samples",
                 "Plugin samples left out of this scrape: same series as another source, or a type clash.", l,
                 static_cast<double>(dropped));
    }
  }
  self.Gauge("mt_exporter_build_info", "mt-exporter version.", {{"version", kVersion}}, 1);
  MergeFamilies(families, self.Take());
  return families;
}

}  // namespace mt::exporter
