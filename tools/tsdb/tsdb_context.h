// What every query_tsdb mode works with: a Prometheus client on the job's TSDB, the data's
// time range (from the blocks' meta.json), the job's hosts, the triage answer (for
// default windows) and the MCP call (progress, cancellation). Its helpers turn PromQL into
// per-host / per-series statistics, so modes never handle raw matrices themselves.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mcp/json.h"
#include "tools/tsdb/exporter_hosts.h"
#include "tools/tsdb/prometheus_client.h"
#include "tools/tsdb/store_signals.h"
#include "tools/tsdb/tsdb_series.h"

namespace mt::mcp {
class CallContext;
}

namespace mt::tools {

struct TsdbWindow {
  double start = 0;   // seconds since the epoch
  double end = 0;
  double seconds() const { return end - start; }
};

// A mode's answer before the tool adds the common fields (job, tsdb, hosts).
struct ModeResult {
  TsdbWindow window;
  Json findings = Json::array();   // {rule, verdict, evidence}
  Json outliers = Json::array();   // {host, gpu?, metric, value, baseline, score}
  std::string verdict;             // one sentence
  Json extra = Json::object();     // mode-specific members merged into structuredContent
  std::vector<std::string> notes;  // caveats (step raised, window clamped, ...)
};

class TsdbContext {
 public:
  TsdbContext(const PrometheusClient& client, TsdbWindow data, mcp::CallContext* call);

  const PrometheusClient& client() const { return client_; }
  const TsdbWindow& data() const { return data_; }   // first and last sample time
  // Clamps `w` into the data range.
  TsdbWindow Clamp(TsdbWindow w) const;

  std::vector<TsdbSeries> Instant(const std::string& expr, double time);
  std::vector<TsdbSeries> Range(const std::string& expr, TsdbWindow w, double step = 0);
  // Instant query of an expression aggregated `by (host)`: host → value.
  std::map<std::string, double> PerHost(const std::string& expr, double time);
  // Range query of an expression aggregated by host: host → stats over the window.
  std::map<std::string, SeriesStats> PerHostRange(const std::string& expr, TsdbWindow w, double step = 0);

  // Hosts present in the TSDB (label `host` of `up`, else of any series, else the hosts the
  // third-party exporters report: a central store has no `host` label of ours).
  const std::vector<std::string>& Hosts();
  // Every metric name in the store (label values of __name__), read once.
  const std::vector<std::string>& MetricNames();
  // The third-party exporters feeding the store (dcgm-exporter, AMD, node_exporter), with
  // their families and hosts over the data range.
  const std::vector<ExporterInStore>& Exporters();
  // What attribution's host signals are called on this store: our hw_* names when the store
  // has them, else the detected exporters' names.
  const StoreSignals& Signals();
  // A shared store holds other jobs' hosts too: from here on, Hosts() and every range or
  // per-host answer keep only these (series without a `host` label pass).
  void RestrictHosts(std::vector<std::string> hosts);
  // Step times from elsewhere (the job's log) for a store without tb_step; `source` says
  // where they came from.
  void SetStepClock(std::vector<TsdbPoint> steps, std::string source);
  const std::string& step_clock_source() const { return step_clock_source_; }
  // Training step → wall time and back through tb_step (node 0's scalar) or the clock set
  // above; nullopt when there is neither.
  std::optional<double> TimeOfStep(long step);
  std::optional<long> StepAt(double time);

  int queries() const { return queries_; }
  void Progress(const std::string& message);
  void CheckCancelled() const;

 private:
  const std::vector<TsdbPoint>& StepSeries();
  bool Kept(const TsdbSeries& s) const;
  const PrometheusClient& client_;
  TsdbWindow data_;
  mcp::CallContext* call_;
  int queries_ = 0;
  std::optional<std::vector<std::string>> hosts_;
  std::optional<std::vector<std::string>> names_;
  std::optional<std::vector<ExporterInStore>> exporters_;
  std::optional<std::vector<TsdbPoint>> steps_;
  std::string step_clock_source_;
  std::optional<StoreSignals> signals_;
  std::optional<std::vector<std::string>> only_hosts_;   // sorted
};

// "2h5m", "90s" for PromQL range selectors (whole seconds, at least 1s).
std::string PromDuration(double seconds);
// ISO-8601 UTC of a float epoch.
std::string IsoTime(double seconds);
// Appends an outlier object ({host, gpu?, metric, value, baseline, score}), rounded.
void AddOutlier(Json& outliers, const std::string& host, const std::string& gpu, const std::string& metric, double value,
                double baseline, double score);
// Regex alternation of host names for a `host=~"..."` matcher (names are escaped).
std::string HostRegex(const std::vector<std::string>& hosts);

}  // namespace mt::tools

namespace mt::tools {
// A number for a sentence: 4 significant digits, no trailing zeros ("300.2", "3500").
std::string Num(double v);
}  // namespace mt::tools
