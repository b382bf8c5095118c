#include "tools/tsdb/tsdb_attribution.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "tools/common/stats.h"
#include "tools/tsdb/host_shift.h"
#include "tools/tsdb/tsdb_modes.h"

namespace mt::tools {
namespace {

// A family signal's expression with its rate window (three scrapes, at least a minute).
std::string WithRate(const std::string& expr, double scrape) {
  const std::string r = PromDuration(std::max(60.0, 3 * scrape));
  return FillWindows(expr, r, r, r);
}

std::vector<HostSeries> PerHostSeries(TsdbContext& tsdb, const std::string& expr, double step) {
  std::vector<HostSeries> out;
  for (auto& s : tsdb.Range(expr, tsdb.data(), step))
    if (!s.label("host").empty()) out.push_back({s.label("host"), std::move(s.points)});
  return out;
}

// The series of a signal (a ", "-list) that the host itself exports: on an exporter store a
// signal reads every GPU exporter's names (a cluster may mix NVIDIA and AMD nodes), but a
// culprit is blamed through its own. The list unchanged on mt's store, or when no exporter
// claims the host.
std::string SeriesOfHost(TsdbContext& tsdb, const std::string& series, const std::string& host) {
  if (tsdb.Signals().vocabulary == "mt") return series;
  std::string out;
  for (size_t at = 0; at < series.size();) {
    size_t end = series.find(", ", at);
    if (end == std::string::npos) end = series.size();
    const std::string item = series.substr(at, end - at), name = item.substr(0, item.find(' '));
    at = end + 2;
    for (const auto& e : tsdb.Exporters()) {
      if (!std::binary_search(e.hosts.begin(), e.hosts.end(), host)) continue;
      const bool exports = std::any_of(e.exporter.present.begin(), e.exporter.present.end(), [&name](const FamilyPresence& p) {
        return std::find(p.series.begin(), p.series.end(), name) != p.series.end();
      });
      if (exports) {
        out += (out.empty() ? "" : ", ") + item;
        break;
      }
    }
  }
  return out.empty() ? series : out;
}

// Per slow segment, the hosts whose signal moved with it.
FamilyCheck CheckFamily(TsdbContext& tsdb, const FamilySignalOnStore& f, const Symptom& sym, std::vector<Culprit>* culprits) {
  FamilyCheck c;
  c.family = f.family;
  c.signal = f.signal.series;
  if (!f.signal.present()) {   // not collected on this store: say so, never "quiet"
    c.verdict = "missing";
    c.missing = f.signal.missing;
    return c;
  }
  const double margin = std::max(60.0, 3 * sym.scrape_s);
  auto series = PerHostSeries(tsdb, WithRate(f.signal.expr, sym.scrape_s), sym.scrape_s);
  if (series.empty()) {
    c.verdict = "no_data";
    return c;
  }
  std::map<std::string, Culprit> best;
  bool uniform = !sym.slow.empty();
  // The merged segments decide uniformity; the unmerged phases may add hosts that took
  // turns inside one slow stretch (a second set of RDMA hosts taking over).
  std::vector<std::pair<SlowSegment, bool>> segments;
  for (const auto& g : sym.slow) segments.emplace_back(g, true);
  for (const auto& g : sym.phases)
    if (std::none_of(sym.slow.begin(), sym.slow.end(), [&](const SlowSegment& m) { return m.step0 == g.step0 && m.step1 == g.step1; }))
      segments.emplace_back(g, false);
  for (const auto& [g, merged] : segments) {
    SegmentShifts s = ShiftsInSegment(series, sym, g, f.floor, margin);
    if (merged) uniform = uniform && s.uniform;
    c.median_shift = std::max(c.median_shift, s.median_shift);
    if (s.uniform) c.score = std::max(c.score, s.uniform_score);
    for (const auto& h : s.hosts) {
      if (!h.culprit) continue;
      const double threshold = h.own_baseline ? kCulpritScore : kCulpritScoreNoBaseline;
      Culprit k{h.host, f.family, f.signal.series, h.onset, h.baseline, h.during, h.score, Confidence(h.score, threshold)};
      auto it = best.find(h.host);
      if (it == best.end() || it->second.score < k.score) best[h.host] = k;
    }
  }
  if (uniform) {
    c.verdict = "uniform";
    return c;   // a shift every host shares names no host
  }
  for (auto& [h, k] : best) {
    k.metric = SeriesOfHost(tsdb, k.metric, h);
    c.hosts.push_back(h);
    c.score = std::max(c.score, k.score);
    culprits->push_back(k);
  }
  c.verdict = c.hosts.empty() ? "quiet" : "aligned";
  return c;
}

// When each host last reported `expr` (a per-host value > 0 over the last two scrape
// intervals). `max_over_time` / `count_over_time` windows, not plain selectors: a plain
// selector would repeat a vanished host's last sample for Prometheus' 5-minute lookback.
std::map<std::string, double> LastSeen(TsdbContext& tsdb, const std::string& expr, double scrape) {
  std::map<std::string, double> seen;
  for (const auto& s : tsdb.Range(expr, tsdb.data(), scrape)) {
    const std::string h = s.label("host");
    if (h.empty()) continue;
    double& t = seen.emplace(h, -1).first->second;
    for (const auto& p : s.points)
      if (p.v > 0) t = std::max(t, p.t);
  }
  return seen;
}

// Hosts that stopped reporting while the others went on: their exporter (`up` ends or
// reads 0), or their GPUs (the GPU series end while the host still answers: GPUs that
// fell off the bus). A host that never reported a family (a missing exporter) is not one.
std::map<std::string, double> VanishedHosts(TsdbContext& tsdb, double scrape) {
  const std::string w = PromDuration(std::max(2 * scrape, 30.0));
  std::map<std::string, double> out;
  for (const HostSignal& presence : tsdb.Signals().presence) {
    auto seen = LastSeen(tsdb, FillWindows(presence.expr, w, w, w), scrape);
    double end_all = -1;
    for (const auto& [h, t] : seen) end_all = std::max(end_all, t);
    for (const auto& [h, t] : seen)
      if (t > 0 && end_all - t >= std::max(300.0, 5 * scrape) && !out.count(h)) out[h] = t;
  }
  return out;
}

// Hosts whose GPUs counted uncorrectable memory/link errors or fatal PCIe errors: a node
// failing in hardware, whether or not it lived long enough to stop reporting.
std::map<std::string, double> FatalHardware(TsdbContext& tsdb) {
  const std::string d = PromDuration(tsdb.data().seconds() + 60);
  std::map<std::string, double> total, out;
  for (const HostSignal& fatal : tsdb.Signals().fatal)
    for (const auto& [h, v] : tsdb.PerHost(FillWindows(fatal.expr, d, d, d), tsdb.data().end)) total[h] += v;
  for (const auto& [h, v] : total)
    if (v >= 0.5) out[h] = v;
  return out;
}

void Stop(TsdbContext& tsdb, Attribution* a) {
  const Symptom& s = a->symptom;
  const double stop = *s.progress_end;
  tsdb.Progress("attribution: who left the collective");
  const double a0 = std::max(tsdb.data().start, stop - 1800), a1 = std::min(tsdb.data().end, stop + 1800);
  const std::string d = PromDuration(a1 - a0);
  const StoreSignals& sig = tsdb.Signals();
  std::map<std::string, double> oom, mem;
  if (sig.oom_kills.present()) oom = tsdb.PerHost(FillWindows(sig.oom_kills.expr, d, d, d), a1);
  if (sig.mem_used_ratio.present()) mem = tsdb.PerHost(FillWindows(sig.mem_used_ratio.expr, d, d, d), a1);
  auto util = s.util_after;   // read by ReadSymptom to decide the stop
  std::vector<std::string> killed, idle;
  for (const auto& [h, v] : oom)
    if (v >= 0.5) killed.push_back(h);
  for (const auto& [h, v] : util)
    if (v < 20) idle.push_back(h);
  FamilyCheck c{"host_oom", sig.oom_kills.present() ? sig.oom_kills.series : "OOM kills",
                killed.empty() ? (sig.oom_kills.present() ? "quiet" : "missing") : "aligned", killed, 0, 0, sig.oom_kills.missing};
  a->checks.push_back(c);
  if (!killed.empty()) {
    a->family = "host_oom";
    for (const auto& h : killed)
      a->culprits.push_back({h, "host_oom", sig.oom_kills.series, stop, 0, oom[h], 10, 0.95});
    a->why = "the kernel's OOM killer fired on " + std::to_string(killed.size()) + " host(s) within 30 min of the stop";
    return;
  }
  std::vector<std::string> full;
  for (const auto& [h, v] : mem)
    if (v >= 0.95) full.push_back(h);
  if (!full.empty() && full.size() * 4 <= mem.size()) {
    a->family = "host_oom";
    for (const auto& h : full) a->culprits.push_back({h, "host_oom", sig.mem_used_ratio.series, stop, 0, mem[h], 6, 0.7});
    a->why = "host memory reached ≥ 95 % of its total on " + std::to_string(full.size()) + " host(s) before the stop";
    return;
  }
  a->family = "collective_hang";
  if (!idle.empty() && idle.size() * 4 <= util.size()) {
    for (const auto& h : idle) a->culprits.push_back({h, "collective_hang", sig.gpu_util.series, stop, 100, util[h], 6, 0.7});
    a->why = "every GPU but those of " + std::to_string(idle.size()) +
             " host(s) spins in a collective after the stop; those went idle: their process left first (its log says why)";
    return;
  }
  a->why = "every host still reports and its GPUs spin in a collective: a collective hang, which no host metric attributes "
           "(the first rank to stop is in the log, or in a py-spy dump)";
}

// The training's own scalars (node 0's exporter): their healthy level before the onset
// against the slow segment's, in units of the sample-to-sample noise (MAD of differences,
// which a trend does not inflate).
std::string TrainingScalarMoved(TsdbContext& tsdb, const Symptom& sym) {
  const SlowSegment& g = sym.slow.front();
  for (const char* m : {"tb_learning_moe_lb_loss", "tb_learning_grad_norm"}) {
    for (const auto& s : PerHostSeries(tsdb, std::string("max by (host) (") + m + ")", sym.scrape_s)) {
      std::vector<double> before, during, diffs;
      for (const auto& p : s.points) {
        if (p.t < g.t0 && InHealthy(sym, p.t, 0)) before.push_back(p.v);
        if (p.t >= g.t0 && p.t <= g.t1) during.push_back(p.v);
      }
      if (before.size() < 3 || during.size() < 3) continue;
      for (size_t i = 1; i < before.size(); ++i) diffs.push_back(before[i] - before[i - 1]);
      // The lower of the healthy stretch's level and that of its last ten samples: early
      // training lowers grad norms (the last samples are the level), and a load-balance
      // spike may precede the throughput onset (the whole stretch is).
      const std::vector<double> last(before.end() - static_cast<std::ptrdiff_t>(std::min<size_t>(10, before.size())), before.end());
      const double level = std::min(Median(before), Median(last)), now = Median(during);
      const double noise = RobustStd(diffs) / std::sqrt(2.0);
      if (now - level > 6 * noise && now - level > 0.2 * std::fabs(level))
        return std::string(m) + " rose from " + Num(level) + " to " + Num(now) + " with the slowdown";
    }
  }
  return "";
}

void Slowdown(TsdbContext& tsdb, Attribution* a) {
  const Symptom& s = a->symptom;
  std::vector<FamilyCheck> checks;
  std::vector<std::vector<Culprit>> per_family;
  for (const auto& f : tsdb.Signals().families) {
    tsdb.Progress("attribution: " + f.family);
    per_family.emplace_back();
    checks.push_back(CheckFamily(tsdb, f, s, &per_family.back()));
  }
  a->checks.insert(a->checks.end(), checks.begin(), checks.end());
  size_t best = checks.size();
  for (size_t i = 0; i < checks.size(); ++i) {
    const auto& c = checks[i];
    if ((c.verdict == "aligned" || c.verdict == "uniform") && (best == checks.size() || c.score > checks[best].score)) best = i;
  }
  if (best < checks.size()) {
    const auto& c = checks[best];
    a->family = c.family;
    a->uniform = c.verdict == "uniform";
    a->culprits = per_family[best];
    a->why = a->uniform ? c.signal + " rose on nearly every host with the slowdown (median +" + Num(c.median_shift) +
                              "): a cause every host shares, no host to blame"
                        : c.signal + " moved with the slowdown on " + std::to_string(c.hosts.size()) +
                              " host(s) beyond their own baseline and the other hosts";
    return;
  }
  tsdb.Progress("attribution: training scalars");
  const std::string moved = TrainingScalarMoved(tsdb, s);
  if (!moved.empty()) {
    a->family = "training";
    a->why = "no host metric moved with the slowdown, and " + moved + ": the training itself";
    return;
  }
  a->family = "unknown";
  a->why = tsdb.Signals().vocabulary == "mt"
               ? "no host metric and no training scalar moved with the slowdown"
               : "no host metric moved with the slowdown, and this store holds no training scalars to check the training itself";
  a->undecided = "a profile of a slow step against a healthy one (perf_analysis), or compare_jobs against a healthy run, "
                 "would show where the time goes";
  // Absent data is not a quiet family: say which ones this store cannot judge.
  std::string missing;
  for (const auto& c : checks)
    if (c.verdict == "missing") missing += (missing.empty() ? "" : ", ") + c.family;
  if (!missing.empty()) {
    a->why += " among the signals this store has";
    a->undecided = "the store does not collect " + missing + " (attribution.checks say why and how to enable them); " +
                   a->undecided;
  }
  if (tsdb.Signals().vocabulary != "mt")
    a->undecided = "a site's store holds no training scalars (MoE load-balance loss, grad norm), which would show a cause "
                   "inside the training: the job's own TSDB, if it has one, would; " + a->undecided;
}

// The store's samples end before the symptom can be judged (store_coverage.h): a stop
// needs the time after it (who left, who kept spinning), a slowdown its slow phase. Then the
// answer is `unknown`, not a conclusion from the part of the job the store holds.
bool DataEndsBeforeTheSymptom(Attribution* a) {
  const StoreCoverage& c = a->coverage;
  if (!c.stale) return false;
  const Symptom& s = a->symptom;
  const double needed = s.kind == "stop" && s.progress_end ? *s.progress_end + std::max(300.0, 5 * s.scrape_s)
                        : s.kind == "slowdown" && !s.slow.empty() ? s.slow.front().t0 + 3 * std::max(60.0, s.scrape_s)
                                                                   : 0;
  if (needed == 0 || c.data_end >= needed) return false;
  a->family = "unknown";
  a->why = "the store's samples end at " + IsoTime(c.data_end) + ", before the " + s.kind + " (" +
           IsoTime(s.kind == "stop" ? *s.progress_end : s.slow.front().t0) + ") can be judged";
  a->undecided = "the samples after " + IsoTime(c.data_end) +
                 ": check the scraping agents and their remote write (prometheus_remote_storage_samples_pending, "
                 "prometheus_remote_storage_samples_failed_total), or query the job's own TSDB if it has one";
  return true;
}

}  // namespace

Attribution Attribute(TsdbContext& tsdb, const Json& triage) {
  Attribution a;
  a.symptom = ReadSymptom(tsdb, triage);
  tsdb.Progress("attribution: whether the store holds the job's data");
  a.coverage = ReadCoverage(tsdb, a.symptom.scrape_s);
  if (DataEndsBeforeTheSymptom(&a)) return a;
  tsdb.Progress("attribution: hosts that stopped reporting");
  auto vanished = VanishedHosts(tsdb, a.symptom.scrape_s);
  const StoreSignals& sig = tsdb.Signals();
  auto series_of = [](const std::vector<HostSignal>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ", ") + x.series;
    return out;
  };
  a.checks.push_back({"node_death", series_of(sig.presence), vanished.empty() ? "quiet" : "aligned", {}, 0, 0, ""});
  for (const auto& [h, t] : vanished) a.checks.back().hosts.push_back(h);
  if (!vanished.empty() && vanished.size() * 2 < tsdb.Hosts().size()) {
    a.family = "node_death";
    // A failed scrape on record (`up` 0) is the host itself not answering; samples that just
    // end may be the agent that scraped it.
    size_t unrecorded = 0;
    for (const auto& [h, t] : vanished) {
      const bool ended = std::find(a.coverage.ended.begin(), a.coverage.ended.end(), h) != a.coverage.ended.end();
      unrecorded += ended;
      a.culprits.push_back({h, "node_death", "up", t, 1, 0, 10, ended ? 0.6 : 0.95});
    }
    a.why = std::to_string(vanished.size()) + " host(s) stopped reporting (last `up` " + IsoTime(vanished.begin()->second) +
            ") while the others went on";
    if (unrecorded)
      a.why += "; " + std::to_string(unrecorded) + " of them with no failed scrape on record (their samples just end): the "
               "host, or the agent that scraped it, stopped — the scheduler's node state tells which";
    return a;
  }
  auto fatal = FatalHardware(tsdb);
  if (sig.fatal.empty())
    a.checks.push_back({"node_death", "GPU uncorrectable errors", "missing", {}, 0, 0,
                        "no GPU error series on this store (dcgm-exporter's DCGM_FI_DEV_XID_ERRORS is on by default; AMD's "
                        "gpu_ecc_uncorrect_total needs the ECC fields exported)"});
  else
    a.checks.push_back({"node_death", series_of(sig.fatal), fatal.empty() ? "quiet" : "aligned", {}, 0, 0, ""});
  for (const auto& [h, n] : fatal) a.checks.back().hosts.push_back(h);
  if (!fatal.empty() && fatal.size() * 2 < tsdb.Hosts().size()) {
    a.family = "node_death";
    const std::string read = sig.vocabulary == "mt" ? "hw_gpu_ras_*_ue_total" : series_of(sig.fatal);
    for (const auto& [h, n] : fatal)
      a.culprits.push_back(
          {h, "node_death", SeriesOfHost(tsdb, read, h), a.symptom.progress_end.value_or(tsdb.data().end), 0, n, 10, 0.9});
    a.why = std::to_string(fatal.size()) + " host(s) counted uncorrectable or fatal GPU errors: a node failing in hardware (drain it)";
    return a;
  }
  if (a.symptom.kind == "stop") Stop(tsdb, &a);
  else if (a.symptom.kind == "slowdown") Slowdown(tsdb, &a);
  else if (a.symptom.kind == "none") {
    a.family = "none";
    a.why = "no symptom to attribute: " + a.symptom.why;
  } else {
    a.family = "unknown";
    a.why = a.symptom.why;
    a.undecided = "the job's TGS per step (its log, or tb_perf_per_device_tokens_per_sec in the TSDB) would give the times "
                  "to align hosts with";
  }
  return a;
}

double MetricFloor(const std::string& m) {
  static const StoreSignals ours = MtStoreSignals();
  for (const auto& f : ours.families)
    if (m == f.signal.series) return f.floor;
  static const std::map<std::string, double> kOthers = {
      {"hw_io_pressure_some_pct", 5}, {"hw_procs_blocked", 2}, {"ray_node_cpu_utilization", 5},
      {"hw_gpu_power_watts", 50}, {"hw_rdma_tx_ack_timeout_total", 0.5}, {"hw_gpu_clock_mhz", 100}};
  auto it = kOthers.find(m);
  if (it != kOthers.end()) return it->second;
  // Third-party exporters' names (store_signals.h), the same physics in their units; AMD's
  // with or without its `amd_` prefix, so matched by suffix.
  static const std::vector<std::pair<const char*, double>> kExporters = {
      {"DCGM_FI_DEV_GPU_TEMP", 6}, {"DCGM_FI_DEV_GPU_TEMP_CELSIUS", 6}, {"gpu_junction_temperature", 6},
      {"gpu_edge_temperature", 6}, {"DCGM_FI_DEV_POWER_USAGE", 50}, {"DCGM_FI_DEV_BOARD_POWER_WATTS", 50}, {"gpu_package_power", 50}, {"gpu_power_usage", 50}, {"DCGM_FI_DEV_SM_CLOCK", 100},
      {"node_netstat_Tcp_RetransSegs", 5}, {"node_infiniband_roce_adp_retransmits_total", 5},
      {"node_infiniband_local_ack_timeout_errors_total", 0.5}, {"node_infiniband_packet_sequence_errors_total", 5},
      {"node_pressure_io_stalled_seconds_total", 0.05}, {"node_pressure_io_waiting_seconds_total", 0.05},
      {"node_procs_running", 4}, {"node_procs_blocked", 2}};
  for (const auto& [name, floor] : kExporters) {
    const std::string n = name;
    if (m.size() >= n.size() && m.compare(m.size() - n.size(), n.size(), n) == 0) return floor;
  }
  return 0;
}

double Confidence(double score, double bar) { return Round(std::min(0.99, 1 - std::pow(0.5, score / bar)), 2); }

std::string FamilyOfMetric(const std::string& m) {
  auto has = [&m](const char* p) { return m.find(p) != std::string::npos; };
  if (has("hw_rdma_")) return "rdma";
  if (has("hw_tcp_")) return "tcp";
  if (has("hw_gpu_temperature") || has("hw_gpu_clock") || has("hw_gpu_power")) return "thermal";
  if (has("hw_io_pressure") || has("hw_procs_blocked") || has("hw_mem_dirty") || has("hw_mem_writeback")) return "io_stall";
  if (has("hw_procs_running") || has("hw_context_switches") || has("ray_node_cpu_utilization")) return "cpu_contention";
  if (has("hw_oom_kills") || has("ray_node_mem_used")) return "host_oom";
  if (has("_ue_total") || has("pcie_fatal") || has("hw_dmesg_gpu")) return "node_death";
  // Third-party exporters' names (exporter_catalog.h)
  if (has("node_infiniband_")) return "rdma";
  if (has("node_netstat_Tcp")) return "tcp";
  if (has("DCGM_FI_DEV_GPU_TEMP") || has("gpu_junction_temperature") || has("gpu_edge_temperature") ||
      has("DCGM_FI_DEV_POWER_USAGE") || has("DCGM_FI_DEV_BOARD_POWER_WATTS") || has("gpu_package_power") ||
      has("DCGM_FI_DEV_SM_CLOCK"))
    return "thermal";
  if (has("node_pressure_io") || has("node_procs_blocked") || has("node_memory_Dirty")) return "io_stall";
  if (has("node_procs_running") || has("node_context_switches") || has("node_pressure_cpu")) return "cpu_contention";
  if (has("node_vmstat_oom_kill") || has("node_memory_MemAvailable")) return "host_oom";
  if (has("DCGM_FI_DEV_XID_ERROR") || has("ecc_uncorrect") || has("UNCORRECTABLE_REMAPPED")) return "node_death";
  return "other";
}

std::string PlaybookForFamily(const std::string& family) {
  if (family == "thermal") return "gpu_health";
  if (family == "rdma" || family == "tcp") return "network_health";
  if (family == "node_death") return "node_failure";
  if (family == "host_oom") return "host_oom";
  if (family == "collective_hang") return "hang";
  return "training_stability";
}

PlaybookChoice ChooseAutoPlaybook(const Attribution& a, const std::string& triage_class) {
  const std::string from_class = PlaybookForClass(triage_class);
  const std::string cls = triage_class.empty() ? "none" : triage_class;
  if (a.family == "none" || a.family == "unknown")
    return {from_class, "triage class " + cls + "; the metrics attribute no fault (" + a.family + ")"};
  if (!a.culprits.empty() || from_class == "training_stability" || from_class == PlaybookForFamily(a.family))
    return {PlaybookForFamily(a.family), "the metrics point at " + a.family + ": " + a.why};
  return {from_class, "triage class " + cls + " names its playbook; the metrics say " + a.family + " without a host to blame"};
}

void AddAttribution(const Attribution& a, TsdbContext& tsdb, QueryAnswer* out) {
  out->family = a.family;
  out->uniform = a.uniform;
  out->culprits.emplace();
  for (const auto& c : a.culprits) {
    QueryCulprit q{c.host, c.family, IsoTime(c.onset), std::nullopt, c.confidence, c.metric, Round(c.baseline),
                   Round(c.during), Round(c.score, 3)};
    if (auto step = tsdb.StepAt(c.onset)) q.onset_step = *step;
    out->culprits->push_back(std::move(q));
  }
  AttributionAnswer att;
  att.symptom = FromSymptom(a.symptom);
  for (const auto& c : a.checks) {
    FamilyCheckAnswer k{c.family, c.signal, c.verdict, c.hosts, std::nullopt, std::nullopt};
    if (c.score != 0) k.score = Round(c.score, 3);
    if (!c.missing.empty()) k.missing = c.missing;
    att.checks.push_back(std::move(k));
  }
  att.why = a.why;
  if (!a.undecided.empty()) att.undecided = a.undecided;
  const StoreCoverage& c = a.coverage;
  att.data_coverage.verdict = c.verdict();
  if (c.data_end > 0 && c.stale) att.data_coverage.data_end = IsoTime(c.data_end);
  for (size_t i = 0; i < c.gaps.size() && i < 8; ++i) att.data_coverage.gappy_hosts.push_back(c.gaps[i].host);
  for (size_t i = 0; i < c.ended.size() && i < 8; ++i) att.data_coverage.ended_hosts.push_back(c.ended[i]);
  if (const std::string note = c.Describe(tsdb.data()); !note.empty()) att.data_coverage.note = note;
  out->attribution = std::move(att);
}

}  // namespace mt::tools
