#include "tools/tsdb/tsdb_context.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "mcp/call_context.h"
#include "tools/common/iso_time.h"

namespace mt::tools {

TsdbContext::TsdbContext(const PrometheusClient& client, TsdbWindow data, mcp::CallContext* call)
    : client_(client), data_(data), call_(call) {}

TsdbWindow TsdbContext::Clamp(TsdbWindow w) const {
  w.start = std::max(w.start, data_.start);
  w.end = std::min(w.end, data_.end);
  if (w.end < w.start) w.end = w.start;
  return w;
}

void TsdbContext::CheckCancelled() const {
  if (call_ && call_->cancelled()) throw std::runtime_error("cancelled");
}

void TsdbContext::Progress(const std::string& message) {
  if (call_) call_->ReportProgress(queries_, std::nullopt, message);
}

std::vector<TsdbSeries> TsdbContext::Instant(const std::string& expr, double time) {
  CheckCancelled();
  ++queries_;
  return ParseQueryData(client_.Query(expr, time));
}

std::vector<TsdbSeries> TsdbContext::Range(const std::string& expr, TsdbWindow w, double step) {
  CheckCancelled();
  ++queries_;
  step = ChooseStep(w.seconds(), step);
  auto series = ParseQueryData(client_.QueryRange(expr, w.start, w.end, step));
  if (only_hosts_) series.erase(std::remove_if(series.begin(), series.end(), [this](const TsdbSeries& s) { return !Kept(s); }),
                                series.end());
  return series;
}

bool TsdbContext::Kept(const TsdbSeries& s) const {
  const std::string h = s.label("host");
  return h.empty() || std::binary_search(only_hosts_->begin(), only_hosts_->end(), h);
}

void TsdbContext::RestrictHosts(std::vector<std::string> hosts) {
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  hosts_ = hosts;
  only_hosts_ = std::move(hosts);
}

void TsdbContext::SetStepClock(std::vector<TsdbPoint> steps, std::string source) {
  steps_ = std::move(steps);
  step_clock_source_ = std::move(source);
}

const StoreSignals& TsdbContext::Signals() {
  if (!signals_) {
    const auto& names = MetricNames();
    const bool ours = std::any_of(names.begin(), names.end(), [](const std::string& n) { return n.rfind("hw_", 0) == 0; });
    signals_ = ours ? MtStoreSignals() : ExporterStoreSignals(Exporters());
  }
  return *signals_;
}

std::map<std::string, double> TsdbContext::PerHost(const std::string& expr, double time) {
  std::map<std::string, double> out;
  for (const auto& s : Instant(expr, time))
    if (!s.points.empty() && (!only_hosts_ || Kept(s))) out[s.label("host")] = s.points.back().v;
  return out;
}

std::map<std::string, SeriesStats> TsdbContext::PerHostRange(const std::string& expr, TsdbWindow w, double step) {
  std::map<std::string, SeriesStats> out;
  for (const auto& s : Range(expr, w, step))
    if (!s.points.empty()) out[s.label("host")] = Stats(s);
  return out;
}

const std::vector<std::string>& TsdbContext::MetricNames() {
  if (!names_) {
    ++queries_;
    names_.emplace();
    for (const auto& n : client_.LabelValues("__name__"))
      if (n.is_string()) names_->push_back(n.get<std::string>());
  }
  return *names_;
}

const std::vector<ExporterInStore>& TsdbContext::Exporters() {
  if (!exporters_) {
    exporters_ = FindExportersInStore(client_, MetricNames(), data_.start, data_.end);
    queries_ += static_cast<int>(exporters_->size());
  }
  return *exporters_;
}

const std::vector<std::string>& TsdbContext::Hosts() {
  if (!hosts_) {
    std::vector<std::string> hosts;
    ++queries_;
    for (const auto& s : client_.Series({"up"}, data_.start, data_.end))
      if (s.contains("host") && s["host"].is_string()) hosts.push_back(s["host"].get<std::string>());
    if (hosts.empty()) {   // no `up` (a TSDB filled by other means): any series' host label
      ++queries_;
      for (const auto& h : client_.LabelValues("host")) hosts.push_back(h.get<std::string>());
    }
    if (hosts.empty())   // a store of third-party exporters: the hosts they report
      for (const auto& e : Exporters()) hosts.insert(hosts.end(), e.hosts.begin(), e.hosts.end());
    std::sort(hosts.begin(), hosts.end());
    hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
    hosts_ = std::move(hosts);
  }
  return *hosts_;
}

const std::vector<TsdbPoint>& TsdbContext::StepSeries() {
  if (!steps_) {
    steps_ = std::vector<TsdbPoint>();
    // The raw samples (a range selector in an instant query): one per emitted step, at the
    // step's wall time, however long the job. Fills (staleness_fill=1) repeat the last step.
    double span = data_.seconds() + 60;
    auto series = Instant("max(tb_step)", data_.end);
    if (!series.empty()) {
      auto raw = Instant("tb_step[" + PromDuration(span) + "]", data_.end);
      for (const auto& s : raw)
        if (s.points.size() > steps_->size()) *steps_ = s.points;
    }
  }
  return *steps_;
}

std::optional<double> TsdbContext::TimeOfStep(long step) {
  const auto& pts = StepSeries();
  for (const auto& p : pts)
    if (p.v >= static_cast<double>(step)) return p.t;
  return std::nullopt;
}

std::optional<long> TsdbContext::StepAt(double time) {
  const auto& pts = StepSeries();
  std::optional<long> out;
  for (const auto& p : pts) {
    if (p.t > time) break;
    out = static_cast<long>(p.v);
  }
  return out;
}

std::string PromDuration(double seconds) {
  long s = std::max(1L, static_cast<long>(std::ceil(seconds)));
  return std::to_string(s) + "s";
}

std::string IsoTime(double seconds) { return FormatIso8601(static_cast<int64_t>(std::floor(seconds))); }

void AddOutlier(Json& outliers, const std::string& host, const std::string& gpu, const std::string& metric, double value,
                double baseline, double score) {
  Json o = {{"host", host}, {"metric", metric}, {"value", Round(value)}, {"baseline", Round(baseline)},
            {"score", Round(score, 3)}};
  if (!gpu.empty()) o["gpu"] = gpu;
  outliers.push_back(std::move(o));
}

std::string HostRegex(const std::vector<std::string>& hosts) {
  std::string out;
  for (const auto& h : hosts) {
    if (!out.empty()) out += '|';
    for (char c : h) {
      if (std::string_view(".+*?()[]{}|^$\\").find(c) != std::string_view::npos) out += "\\\\";
      out += c;
    }
  }
  return out;
}

}  // namespace mt::tools

namespace mt::tools {
std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", Round(v));
  return buf;
}
}  // namespace mt::tools
