#include "tools/compare/compare_tsdb.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "mcp/call_context.h"
#include "tools/common/stats.h"
#include "tools/shared_store/job_on_store.h"
#include "tools/tsdb/metrics_source.h"
#include "tools/tsdb/prometheus_client.h"
#include "tools/tsdb/store_signals.h"
#include "tools/tsdb/tsdb_attribution.h"
#include "tools/tsdb/tsdb_blocks.h"
#include "tools/tsdb/tsdb_context.h"

namespace mt::tools {
namespace {

constexpr double kRelFloor = 0.01;
constexpr double kUniformSignificant = 5;
constexpr double kHostOutlier = 8;
constexpr double kConsistentShare = 0.9;
constexpr double kSignZ = 4;

bool StartsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
bool EndsWith(const std::string& s, const std::string& x) {
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

std::string KindOf(const std::string& m) {
  if (StartsWith(m, "tb_perf_")) return "throughput";
  if (StartsWith(m, "tb_")) return "training";
  return "contention";
}

bool Compared(const std::string& m) {
  if (!(StartsWith(m, "hw_") || StartsWith(m, "tb_") || StartsWith(m, "ray_node_"))) return false;
  // Bookkeeping series, not behaviour.
  return m != "tb_step" && !StartsWith(m, "tb_metrics_plugin_");
}

std::vector<double> Vals(const HostValues& h) {
  std::vector<double> v;
  for (const auto& [_, x] : h.values) v.push_back(x);
  return v;
}

int KindRank(const std::string& k) { return k == "contention" ? 0 : k == "training" ? 1 : 2; }

}  // namespace

MetricComparison CompareHostValues(const std::string& metric, bool counter, const HostValues& ha, const HostValues& hb) {
  MetricComparison c;
  c.metric = metric;
  c.kind = KindOf(metric);
  c.counter = counter;
  c.hosts_a = ha.values.size();
  c.hosts_b = hb.values.size();
  c.pattern = "none";
  if (ha.values.empty() || hb.values.empty()) return c;
  std::vector<double> va = Vals(ha), vb = Vals(hb);
  double med_a = Quantile(va, 0.5), med_b = Quantile(vb, 0.5);
  double sa = RobustStd(va), sb = RobustStd(vb);
  double mag = std::max(std::fabs(med_a), std::fabs(med_b));
  // Counter rates of rare events (retransmits, RAS errors) need an absolute floor: 0.1/s
  // is noise; gauges get a tiny one so that identical constants compare as equal.
  double floor = std::max(kRelFloor * mag, counter ? 0.1 : 1e-9);
  // A difference smaller than what matters in the metric's units (2 runnable threads, a
  // hundredth of a percent of I/O pressure) is no difference, however quiet the hosts.
  const double matters = MetricFloor(metric);
  double na = std::max(sa, floor), nb = std::max(sb, floor);
  c.a = med_a;
  c.b = med_b;
  c.a_mean = Summarize(va).mean;
  c.b_mean = Summarize(vb).mean;
  c.delta = med_b - med_a;
  c.delta_pct = med_a != 0 ? 100 * c.delta / std::fabs(med_a) : 0;

  // Uniform shift.
  double noise = std::max(std::sqrt((sa * sa + sb * sb) / 2), floor);
  double uniform = std::fabs(c.delta) / noise;
  std::map<std::string, double> mb(hb.values.begin(), hb.values.end());
  size_t common = 0, agree = 0;
  std::vector<double> paired;
  for (const auto& [h, x] : ha.values) {
    auto it = mb.find(h);
    if (it == mb.end()) continue;
    ++common;
    double d = it->second - x;
    paired.push_back(d);
    if (c.delta != 0 && d * c.delta > 0 && std::fabs(d) >= 0.5 * std::fabs(c.delta)) ++agree;
  }
  c.hosts_common = common;
  c.hosts_consistent = common >= 2 && c.delta != 0 && static_cast<double>(agree) >= kConsistentShare * static_cast<double>(common);
  // On the same hosts, each host is its own control: hosts that differ from each other
  // (one busier than the rest in both jobs) no longer hide a shift every host shares.
  if (paired.size() >= 3) {
    const double d = Quantile(paired, 0.5), paired_noise = std::max(RobustStd(paired), floor);
    if (d * c.delta > 0) uniform = std::max(uniform, std::fabs(d) / paired_noise);
  }

  // Hosts that stand out from their own job and from the other one.
  std::vector<std::pair<std::string, double>> out;   // host, score
  std::map<std::string, double> value_of;
  std::set<char> sides;
  double concentrated = 0;
  auto scan = [&](const HostValues& self, double med_self, double n_self, const std::vector<double>& other, double med_other,
                  double n_other, char side) {
    double lo = *std::min_element(other.begin(), other.end()), hi = *std::max_element(other.begin(), other.end());
    for (const auto& [h, x] : self.values) {
      double vs_other = std::fabs(x - med_other), vs_self = std::fabs(x - med_self);
      double min_abs = std::max({0.1 * std::max(std::fabs(med_other), std::fabs(med_self)), counter ? 1.0 : 1e-9, matters});
        // Beyond every host of the other job, not just its median: heterogeneity both jobs
      // share (one warm host in each) is not a difference between them.
      double margin = 0.1 * vs_other;
      bool beyond = x > hi + margin || x < lo - margin;
      if (beyond && vs_other > kHostOutlier * n_other && vs_self > kHostOutlier * n_self && vs_other >= min_abs) {
        double z = vs_other / n_other;
        out.emplace_back(h, z);
        value_of[h] = x;
        sides.insert(side);
        concentrated = std::max(concentrated, z);
      }
    }
  };
  scan(ha, med_a, na, vb, med_b, nb, 'a');
  scan(hb, med_b, nb, va, med_a, na, 'b');
  std::sort(out.begin(), out.end(), [&](const auto& x, const auto& y) {
    return value_of[x.first] != value_of[y.first] ? std::fabs(value_of[x.first]) > std::fabs(value_of[y.first]) : x.first < y.first;
  });

  // Host consistency as a test of its own (a sign test over the common hosts): 26 of 28
  // hosts moving the same way is no accident even when the hosts differ so much from each
  // other that the shift is small against their spread. At least 16 hosts (z ≥ 4 needs
  // 16 of 16), and a shift of 10 % and of what matters in the units.
  const double sign_z = common > 0 ? (2.0 * static_cast<double>(agree) - static_cast<double>(common)) / std::sqrt(static_cast<double>(common)) : 0;
  const bool consistent_shift = sign_z >= kSignZ && std::fabs(c.delta_pct) >= 10;
  if (consistent_shift && c.hosts_consistent) uniform = std::max(uniform, sign_z);
  bool uniform_sig = uniform >= kUniformSignificant && (c.hosts_consistent || common == 0) && std::fabs(c.delta) >= matters;
  bool hosts_sig = !out.empty() && out.size() * 2 <= std::max(ha.values.size(), hb.values.size());
  c.score = std::max(uniform_sig ? uniform : std::min(uniform, kUniformSignificant), hosts_sig ? concentrated : 0.0);
  if (uniform_sig && (!hosts_sig || uniform >= concentrated)) {
    c.pattern = "uniform";
  } else if (hosts_sig) {
    c.pattern = "hosts";
    for (size_t i = 0; i < out.size() && i < 8; ++i) c.hosts.emplace_back(out[i].first, value_of[out[i].first]);
    c.hosts_in = sides.size() > 1 ? "both" : std::string(1, *sides.begin());
  }
  c.significant = c.pattern != "none";
  return c;
}

namespace {

// One job's side of the sweep: its store, its window and the metrics it has, each with the
// per-host expression that reads it.
struct Side {
  const ContentionSide* in = nullptr;
  std::optional<TsdbLease> lease;
  std::unique_ptr<PrometheusClient> client;
  std::unique_ptr<TsdbContext> ctx;
  TsdbWindow w;
  std::map<std::string, std::vector<std::string>> names;   // metric → host labels ({} = it has `host`)
  std::set<std::string> cumulative;                        // exporter gauges that only grow
};

void OpenOwnTsdb(Side& s, TsdbManager& manager, mcp::CallContext* call) {
  const JobFiles& job = *s.in->job;
  if (job.dir.empty()) throw TsdbError(TsdbError::Code::kMissing, "job " + job.id + " has no job directory, so no TSDB");
  TsdbLayout layout = ReadTsdbLayout(job.dir / "prometheus");
  TsdbSource src;
  src.tsdb_dir = job.dir / "prometheus";
  src.job_running = s.in->running;
  if (s.in->running && !job.log.empty()) src.live_port = LivePrometheusPort(job.log);
  s.lease.emplace(manager.Acquire(src));
  s.client = std::make_unique<PrometheusClient>(s.lease->url());
  s.ctx = std::make_unique<TsdbContext>(*s.client, TsdbWindow{layout.min_ms / 1000.0, (layout.max_ms - 1) / 1000.0}, call);
}

// A shared store: the job's window, hosts and step times from its log and the scheduler.
void OpenSharedStore(Side& s, mcp::CallContext* call, std::vector<std::string>* notes) {
  const JobFiles& job = *s.in->job;
  SchedulerAnswer scheduler(job);
  std::string from;
  s.client = std::make_unique<PrometheusClient>(s.in->source->url, ClientOptionsFor(*s.in->source));
  auto window = StoreWindow(job, std::nullopt, std::nullopt, std::nullopt, scheduler, *s.client, &from);
  if (!window)
    throw std::runtime_error("job " + job.id + ": its log has no time stamps, the scheduler does not know when it ran and no "
                             "GPU series on the store carries its id (hpc_job, job_id) in the last 30 days, so nothing "
                             "places it on the store's time axis");
  s.ctx = std::make_unique<TsdbContext>(*s.client, *window, call);
  const JobHostsOnStore hosts = MatchJobHosts(job, scheduler, *s.ctx);
  if (!hosts.found.empty()) s.ctx->RestrictHosts(hosts.found);
  std::vector<std::string> mine{hosts.note};
  SetStepClockFromLog(job, *window, from, scheduler, *s.ctx, &mine);
  for (const auto& n : mine) notes->push_back("job " + job.id + ": " + n);
}

// The metrics a side compares: ours (hw_*, ray_node_*, tb_*), or every series of the
// exporters' families on a shared store, read through the exporter's host label.
void ListMetrics(Side& s) {
  if (s.ctx->Signals().vocabulary == "mt" || s.ctx->Exporters().empty()) {
    for (const auto& n : s.ctx->MetricNames())
      if (Compared(n)) s.names.emplace(n, std::vector<std::string>{});
    return;
  }
  for (const auto& e : s.ctx->Exporters()) {
    const ExporterSpec* spec = nullptr;
    for (const auto& x : ExporterCatalog())
      if (x.id == e.exporter.id) spec = &x;
    for (const auto& p : e.exporter.present)
      for (const auto& n : p.series) {
        s.names.emplace(n, e.exporter.host_labels);
        if (spec)
          for (const auto& f : spec->families)
            if (f.name == p.family && f.cumulative) s.cumulative.insert(n);
      }
  }
}

}  // namespace

ContentionSweepResult ContentionSweep(const ContentionSide& sa, const ContentionSide& sb, TsdbManager& manager, mcp::CallContext* call) {
  ContentionSweepResult r;
  Side sides[2];
  sides[0].in = &sa;
  sides[1].in = &sb;
  for (Side& s : sides) {
    const JobFiles& job = *s.in->job;
    if (s.in->source) OpenSharedStore(s, call, &r.notes);
    else OpenOwnTsdb(s, manager, call);
    const TsdbWindow data = s.ctx->data();
    auto t0 = s.ctx->TimeOfStep(s.in->first_step), t1 = s.ctx->TimeOfStep(s.in->last_step);
    if (t0 && t1 && *t1 - *t0 >= 60) {
      s.w = {*t0, *t1};
    } else {
      s.w = data;
      r.notes.push_back("job " + job.id + ": steps " + std::to_string(s.in->first_step) + "–" + std::to_string(s.in->last_step) +
                        " not placed in time (" + (s.in->source ? "its log's steps" : "tb_step") + "); the whole " +
                        (s.in->source ? "window" : "TSDB range") + " is used");
    }
    ListMetrics(s);
    r.windows.push_back(SweepWindow{job.id, IsoTime(s.w.start), IsoTime(s.w.end), s.lease ? s.lease->source() : "remote",
                                    s.lease && s.lease->started()});
  }
  std::vector<std::string> metrics;
  for (const auto& [n, labels] : sides[0].names)
    if (sides[1].names.count(n)) metrics.push_back(n);
  std::vector<std::string> only;
  for (int i = 0; i < 2; ++i)
    for (const auto& [n, labels] : sides[i].names)
      if (!sides[1 - i].names.count(n)) only.push_back(n + " (only " + sides[i].in->job->id + ")");
  if (!only.empty()) {
    std::string s = "metrics in one TSDB only: ";
    for (size_t i = 0; i < only.size() && i < 6; ++i) s += (i ? ", " : "") + only[i];
    if (only.size() > 6) s += ", …";
    r.notes.push_back(s);
  }

  size_t done = 0;
  for (const auto& m : metrics) {
    if (call) {
      if (call->cancelled()) throw std::runtime_error("cancelled");
      call->ReportProgress(static_cast<double>(done), static_cast<double>(metrics.size()), "comparing " + m);
    }
    ++done;
    bool counter = EndsWith(m, "_total") || sides[0].cumulative.count(m);
    HostValues hv[2];
    for (int i = 0; i < 2; ++i) {
      Side& s = sides[i];
      std::string range = "[" + PromDuration(s.w.seconds()) + "]";
      // Counters: the upper quartile over the window of the 5-minute rate, sampled each
      // minute. A difference between jobs is one that lasts a quarter of the window or
      // more (a phase of retransmits on a few hosts); a burst of a few minutes on one host
      // is not, though its mean over the window would be.
      std::string inner = counter ? "quantile_over_time(0.75, rate(" + m + "[5m])" + range.substr(0, range.size() - 1) + ":60s])"
                                  : "quantile_over_time(0.5, " + m + range + ")";
      const auto& labels = s.names.at(m);   // an exporter's series: its host label becomes `host`
      std::string expr = (counter ? "sum by (host) (" : "avg by (host) (") + (labels.empty() ? inner : WithHostLabel(inner, labels)) + ")";
      for (const auto& [host, v] : s.ctx->PerHost(expr, s.w.end))
        if (std::isfinite(v)) hv[i].values.emplace_back(host, v);
    }
    r.metrics.push_back(CompareHostValues(m, counter, hv[0], hv[1]));
  }
  r.queries = sides[0].ctx->queries() + sides[1].ctx->queries();
  std::stable_sort(r.metrics.begin(), r.metrics.end(), [](const MetricComparison& x, const MetricComparison& y) {
    if (x.significant != y.significant) return x.significant;
    if (KindRank(x.kind) != KindRank(y.kind)) return KindRank(x.kind) < KindRank(y.kind);
    return x.score > y.score;
  });
  return r;
}

}  // namespace mt::tools
