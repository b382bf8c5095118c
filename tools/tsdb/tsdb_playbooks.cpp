// query_tsdb mode "playbook": the seven playbooks of the tsdb-diagnosis methodology
// (reference/maxtext-slurm.md §4.2), each a fixed set of queries and decision rules.
// MI355X power levels: ~900 W computing, ~300 W busy-waiting in a collective, ~260 W idle.
#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "tools/common/iso_time.h"
#include "tools/common/nodelist.h"
#include "tools/tsdb/tsdb_modes.h"
#include "tools/tsdb/tsdb_network.h"

namespace mt::tools {
namespace {

constexpr double kActiveW = 700;      // above: the GPU is computing
constexpr double kBusyWaitMaxW = 500; // below, with high utilization: spinning in a collective
constexpr double kHighUtil = 80;

std::optional<double> TriageTime(const Json& t, std::initializer_list<const char*> path) {
  const Json* j = &t;
  for (const char* k : path) {
    if (!j->is_object() || !j->contains(k)) return std::nullopt;
    j = &(*j)[k];
  }
  if (!j->is_string()) return std::nullopt;
  auto v = ParseIso8601(j->get<std::string>());
  return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

std::string TriageString(const Json& t, const char* key) {
  return t.is_object() && t.contains(key) && t[key].is_string() ? t[key].get<std::string>() : "";
}

struct GpuValue {
  std::string host, gpu;
  double v = 0;
};
std::vector<GpuValue> PerGpu(TsdbContext& tsdb, const std::string& expr, double time) {
  std::vector<GpuValue> out;
  for (const auto& s : tsdb.Instant(expr, time))
    if (!s.points.empty()) out.push_back({s.label("host"), s.label("gpu"), s.points.back().v});
  return out;
}

struct Summary {
  double mean = 0, min = 0, max = 0;
  int n = 0;
};
Summary Summarise(const std::vector<GpuValue>& v) {
  Summary s;
  if (v.empty()) return s;
  s.min = s.max = v[0].v;
  double sum = 0;
  for (const auto& g : v) {
    sum += g.v;
    s.min = std::min(s.min, g.v);
    s.max = std::max(s.max, g.v);
  }
  s.n = static_cast<int>(v.size());
  s.mean = sum / s.n;
  return s;
}
Json SummaryJson(const Summary& s) { return {{"mean", Round(s.mean)}, {"min", Round(s.min)}, {"max", Round(s.max)}, {"n", s.n}}; }

void GpuOutliers(Json& outliers, const std::vector<GpuValue>& v, const std::string& metric, size_t limit = 8) {
  std::vector<double> vals;
  for (const auto& g : v) vals.push_back(g.v);
  auto sc = RobustScores(vals);
  double base = Median(vals);
  std::vector<size_t> idx;
  for (size_t i = 0; i < sc.size(); ++i)
    if (std::fabs(sc[i]) >= 3.5 && std::fabs(vals[i] - base) > 0.05 * std::fabs(base)) idx.push_back(i);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return std::fabs(sc[a]) > std::fabs(sc[b]); });
  for (size_t k = 0; k < idx.size() && k < limit; ++k)
    AddOutlier(outliers, v[idx[k]].host, v[idx[k]].gpu, metric, vals[idx[k]], base, sc[idx[k]]);
}

Json NetworkEvidence(const std::map<std::string, HostNetwork>& net, const std::vector<std::string>& flagged) {
  double tcp = 0, rdma = 0, ack = 0, retry = 0;
  int ports_down = 0;
  for (const auto& [h, n] : net) {
    (void)h;
    tcp = std::max(tcp, n.tcp_retx_max);
    rdma = std::max(rdma, n.rdma_retx_max);
    ack += n.ack_timeout_total;
    retry += n.retry_exceeded_total;
    if (n.port_state_min < 1) ++ports_down;
  }
  return {{"tcp_retx_max_per_s", Round(tcp)}, {"rdma_retx_max_per_s", Round(rdma)}, {"ack_timeouts", Round(ack)},
          {"retry_exceeded", Round(retry)}, {"hosts_with_port_down", ports_down}, {"flagged_hosts", flagged}};
}

// ---- 1. hang -------------------------------------------------------------------------------
ModeResult Hang(TsdbContext& tsdb, const Json& triage, std::optional<TsdbWindow> given) {
  ModeResult r;
  std::optional<double> hang_at = TriageTime(triage, {"progress", "last_progress_time"});
  const bool triage_hang = TriageString(triage, "class") == "hang" || TriageString(triage, "status") == "hang";
  TsdbWindow hang, before;
  if (given && hang_at && triage_hang && *hang_at > given->start && *hang_at < given->end) {
    // A window around the hang (as triage's next_steps give it): the part before the last
    // progress is the baseline, the part after it is the hang.
    TsdbWindow w = tsdb.Clamp(*given);
    before = tsdb.Clamp({std::max(w.start, *hang_at - 1800), *hang_at});
    hang = tsdb.Clamp({*hang_at + 300, w.end});
    if (hang.seconds() < 600) hang = tsdb.Clamp({*hang_at, w.end});
  } else if (given) {
    hang = tsdb.Clamp(*given);
    before = tsdb.Clamp({hang.start - 1800, hang.start});
    hang_at = hang.start;
  } else {
    if (!hang_at || !triage_hang) {
      r.notes.push_back("triage does not report a hang; checking the last 30 minutes of data");
      hang_at = tsdb.data().end - 1800;
    }
    before = tsdb.Clamp({*hang_at - 1800, *hang_at});
    hang = tsdb.Clamp({*hang_at + 300, tsdb.data().end});
    if (hang.seconds() < 600) hang = tsdb.Clamp({*hang_at, tsdb.data().end});
  }
  if (hang.seconds() <= 0) throw std::invalid_argument("the hang window " + IsoTime(*hang_at) + " lies outside the TSDB's data");
  r.window = {before.start, hang.end};
  const std::string d = PromDuration(hang.seconds());

  tsdb.Progress("hang: GPU utilization and power");
  auto util = PerGpu(tsdb, "avg_over_time(ray_node_gpus_utilization[" + d + "])", hang.end);
  auto power = PerGpu(tsdb, "avg_over_time(hw_gpu_power_watts[" + d + "])", hang.end);
  auto power_before = before.seconds() > 0
                          ? PerGpu(tsdb, "avg_over_time(hw_gpu_power_watts[" + PromDuration(before.seconds()) + "])", before.end)
                          : std::vector<GpuValue>{};
  Summary us = Summarise(util), ps = Summarise(power), pb = Summarise(power_before);
  int util_high = 0, busy = 0, active = 0, dead = 0;
  for (const auto& g : util) util_high += g.v >= kHighUtil;
  for (const auto& g : power) {
    busy += g.v < kBusyWaitMaxW && g.v >= 100;
    active += g.v >= kActiveW;
    dead += g.v < 100;
  }
  // When did power fall? The cluster mean crossing halfway between before and after.
  std::optional<double> fell_at;
  if (pb.n && ps.n && pb.mean - ps.mean > 200) {
    double mid = (pb.mean + ps.mean) / 2;
    auto curve = tsdb.Range("avg(hw_gpu_power_watts)", tsdb.Clamp({before.start, std::min(hang.end, *hang_at + 3600)}), 60);
    if (!curve.empty())
      for (const auto& p : curve[0].points)
        if (p.t >= before.start && p.v < mid) {
          fell_at = p.t;
          break;
        }
  }
  const auto& hosts = tsdb.Hosts();
  std::set<std::string> reporting;
  for (const auto& g : power) reporting.insert(g.host);
  std::vector<std::string> silent;
  for (const auto& h : hosts)
    if (!reporting.count(h)) silent.push_back(h);

  tsdb.Progress("hang: network");
  auto net = NetworkByHost(tsdb, tsdb.Clamp({before.start, hang.end}));
  auto flagged = RankNetworkHosts(net);
  const bool clean = NetworkClean(net);
  auto net_before = NetworkByHost(tsdb, before);
  bool spike_before = !RankNetworkHosts(net_before).empty();

  Json ue = SummaryJson(us);
  ue["gpus_at_least_80_pct"] = util_high;
  r.findings.push_back({{"rule", "GPU utilization during the hang (ray_node_gpus_utilization; ≥80 % = busy)"},
                        {"verdict", us.n == 0 ? "no_data" : util_high * 10 >= us.n * 9 ? "high" : util_high == 0 ? "low" : "mixed"},
                        {"evidence", ue}});
  Json pe = SummaryJson(ps);
  pe["before_mean_w"] = Round(pb.mean);
  pe["gpus_busy_wait"] = busy;
  pe["gpus_active"] = active;
  pe["gpus_dead"] = dead;
  pe["power_fell_at"] = fell_at ? Json(IsoTime(*fell_at)) : Json(nullptr);
  std::string pverdict = ps.n == 0                 ? "no_data"
                         : busy * 10 >= ps.n * 9   ? "busy-wait (~300 W)"
                         : active * 10 >= ps.n * 9 ? "active (~900 W)"
                         : dead > 0                ? "some GPUs at 0 W"
                                                   : "mixed";
  r.findings.push_back({{"rule", "GPU power during the hang (hw_gpu_power_watts: ~900 W active, ~300 W busy-wait, ~260 W idle)"},
                        {"verdict", pverdict},
                        {"evidence", pe}});
  r.findings.push_back({{"rule", "network clean around the hang (TCP retx ≤ 10/s, no sustained RDMA retx, no ACK timeouts, ports up)"},
                        {"verdict", clean ? "clean" : "not clean"},
                        {"evidence", NetworkEvidence(net, flagged)}});
  r.findings.push_back({{"rule", "retransmit spike in the 30 min before the hang (network-triggered hang)"},
                        {"verdict", spike_before ? "spike" : "none"},
                        {"evidence", {{"flagged_hosts", RankNetworkHosts(net_before)}}}});
  r.findings.push_back({{"rule", "every node still reports (0 W / missing = node death)"},
                        {"verdict", silent.empty() && dead == 0 ? "all reporting" : "missing or dead nodes"},
                        {"evidence", {{"hosts", hosts.size()}, {"silent_hosts", silent}, {"gpus_at_0w", dead}}}});
  GpuOutliers(r.outliers, power, "hw_gpu_power_watts");
  GpuOutliers(r.outliers, util, "ray_node_gpus_utilization");

  const std::string when = fell_at ? " Power fell at " + IsoTime(*fell_at) + "." : "";
  if (ps.n == 0) r.verdict = "No GPU power data in the hang window.";
  else if (!silent.empty() || dead > 0)
    r.verdict = "Node death: " + std::to_string(silent.size()) + " host(s) stopped reporting and " + std::to_string(dead) +
                " GPU(s) read ~0 W during the hang; check RAS/dmesg (playbook node_failure)." + when;
  else if (busy * 10 >= ps.n * 9 && (util_high * 2 >= us.n || us.n == 0) && spike_before)
    r.verdict = "Network-triggered collective hang: GPUs busy-wait at ~" + Num(ps.mean) + " W after retransmits on " +
                std::to_string(RankNetworkHosts(net_before).size()) + " host(s)." + when;
  else if (busy * 10 >= ps.n * 9 && (util_high * 2 >= us.n || us.n == 0) && clean)
    r.verdict = "Collective busy-wait hang (RCCL): " + Num(us.mean) + " % utilization at ~" + Num(ps.mean) + " W on " +
                std::to_string(busy) + " of " + std::to_string(ps.n) + " GPUs with a clean network." + when;
  else if (active * 10 >= ps.n * 9)
    r.verdict = "Not a hang: GPUs still draw ~" + Num(ps.mean) + " W (computing).";
  else
    r.verdict = "Mixed power (" + std::to_string(busy) + " busy-wait, " + std::to_string(active) +
                " active GPUs): a straggler holds the collective; see the outliers." + when;
  return r;
}

// ---- 6. network_health -------------------------------------------------------------------
ModeResult NetworkHealth(TsdbContext& tsdb, const Json& triage, std::optional<TsdbWindow> given) {
  ModeResult r;
  r.window = given ? tsdb.Clamp(*given) : tsdb.data();
  auto net = NetworkByHost(tsdb, r.window);
  auto flagged = RankNetworkHosts(net);
  Json per_host = Json::array();
  std::map<std::string, std::pair<long, long>> steps;   // host → step range of retransmits
  for (const auto& h : flagged) {
    const auto& n = net.at(h);
    Json e = {{"host", h},
              {"class", n.severity_class},
              {"rdma_retx_packets", Round(n.rdma_retx_total)},
              {"rdma_retx_max_per_s", Round(n.rdma_retx_max)},
              {"ack_timeouts", Round(n.ack_timeout_total)},
              {"retry_exceeded", Round(n.retry_exceeded_total)},
              {"cnp", Round(n.cnp_total)}};
    if (n.active_points) {
      e["from"] = IsoTime(n.active_from);
      e["to"] = IsoTime(n.active_to);
      auto s0 = tsdb.StepAt(n.active_from), s1 = tsdb.StepAt(n.active_to);
      if (s0 && s1) {
        e["steps"] = {*s0, *s1};
        steps[h] = {*s0, *s1};
      }
    }
    per_host.push_back(e);
    AddOutlier(r.outliers, h, "", "rate(hw_rdma_tx_retx_pkts_total[5m])", n.rdma_retx_max, 0, n.rdma_retx_max);
  }
  int tcp_hosts = 0;
  for (const auto& [h, n] : net) tcp_hosts += n.severity_class == 4;
  r.findings.push_back({{"rule", "RDMA retransmits + ACK timeouts (sustained) are the first cause of TGS loss; exclusion priority: "
                                  "1 retry-exhausted > 2 RDMA retx > 3 CNP > 4 TCP only (do not exclude)"},
                        {"verdict", flagged.empty() ? "clean" : std::to_string(flagged.size()) + " host(s) to exclude"},
                        {"evidence", {{"hosts", per_host}, {"hosts_checked", net.size()}}}});
  r.findings.push_back({{"rule", "TCP-only retransmits (> 10/s) do not reduce TGS (RCCL runs over RDMA)"},
                        {"verdict", tcp_hosts ? "present" : "none"},
                        {"evidence", NetworkEvidence(net, {})}});
  // Tie the TGS phases triage found to the hosts whose retransmits cover them.
  if (triage.is_object() && triage.contains("tgs") && triage["tgs"].is_object() && triage["tgs"].contains("phases")) {
    Json ties = Json::array();
    for (const auto& ph : triage["tgs"]["phases"]) {
      long a = ph.value("start_step", 0L), b = ph.value("end_step", 0L);
      std::vector<std::string> hs;
      for (const auto& h : flagged) {
        auto it = steps.find(h);
        if (it == steps.end()) continue;
        long lo = std::max(a, it->second.first), hi = std::min(b, it->second.second);
        if (hi >= lo && (hi - lo + 1) * 2 >= (b - a + 1)) hs.push_back(h);
      }
      ties.push_back({{"steps", {a, b}}, {"tgs", ph.value("mean", 0.0)}, {"change_pct", ph.value("change_pct", 0.0)}, {"hosts", hs}});
    }
    r.findings.push_back({{"rule", "TGS phases (triage) tied to the hosts retransmitting through them"},
                          {"verdict", "info"},
                          {"evidence", {{"phases", ties}}}});
  }
  if (flagged.empty()) {
    r.verdict = "Network clean: no RDMA retransmits, ACK timeouts, retry-exhausted errors or congestion on " +
                std::to_string(net.size()) + " hosts.";
  } else {
    std::string list;
    for (const auto& h : flagged) list += (list.empty() ? "" : ", ") + h;
    r.verdict = std::to_string(flagged.size()) + " host(s) with sustained RDMA retransmits, most severe first: " + list +
                "; exclude them (e.g. sbatch --exclude).";
  }
  return r;
}

// ---- 2. heartbeat --------------------------------------------------------------------------
ModeResult Heartbeat(TsdbContext& tsdb, const Json& triage, std::optional<TsdbWindow> given) {
  ModeResult r;
  const Json hb = triage.is_object() && triage.contains("heartbeat") ? triage["heartbeat"] : Json();
  std::vector<std::string> accused, neighbours;
  if (hb.is_object()) {
    for (const auto& a : hb.value("accused", Json::array()))
      if (a.contains("host") && a["host"].is_string()) accused.push_back(a["host"].get<std::string>());
    for (const auto& a : hb.value("neighbours", Json::array()))
      if (a.contains("host") && a["host"].is_string()) neighbours.push_back(a["host"].get<std::string>());
  }
  auto crash = TriageTime(triage, {"heartbeat", "crash_time"});
  auto stop = TriageTime(triage, {"heartbeat", "heartbeat_stop_time"});
  if (given) r.window = tsdb.Clamp(*given);
  else if (crash) r.window = tsdb.Clamp({stop ? *stop : *crash - 900, *crash});
  else {
    r.notes.push_back("triage reports no heartbeat timeout; checking the last 15 minutes of data");
    r.window = tsdb.Clamp({tsdb.data().end - 900, tsdb.data().end});
  }
  if (r.window.seconds() <= 0) throw std::invalid_argument("the heartbeat window lies outside the TSDB's data");
  std::vector<std::string> hosts = accused;
  hosts.insert(hosts.end(), neighbours.begin(), neighbours.end());
  if (hosts.empty()) hosts = tsdb.Hosts();
  const std::string m = "host=~\"" + HostRegex(hosts) + "\"";
  const std::string d = PromDuration(r.window.seconds());
  const double t = r.window.end;
  tsdb.Progress("heartbeat: accused hosts");
  auto util = tsdb.PerHost("avg by (host) (avg_over_time(ray_node_gpus_utilization{" + m + "}[" + d + "]))", t);
  auto power = tsdb.PerHost("avg by (host) (avg_over_time(hw_gpu_power_watts{" + m + "}[" + d + "]))", t);
  auto io = tsdb.PerHost("max by (host) (max_over_time(hw_io_pressure_full_pct{" + m + "}[" + d + "]))", t);
  auto dirty = tsdb.PerHost("max by (host) (max_over_time(hw_mem_dirty_bytes{" + m + "}[" + d + "]))", t);
  auto mem = tsdb.PerHost("max by (host) (max_over_time(ray_node_mem_used{" + m + "}[" + d + "]))", t);
  auto net = NetworkByHost(tsdb, r.window, m);
  std::string coordinator;
  if (triage.is_object() && triage.contains("job") && triage["job"].value("nodelist", Json()).is_string())
    if (auto list = ExpandNodelist(triage["job"]["nodelist"].get<std::string>()); list && !list->empty()) coordinator = list->front();
  double drops = 0;
  if (!coordinator.empty())
    for (auto& [h, v] : tsdb.PerHost("sum by (host) (increase(hw_tcp_listen_drops_total{host=\"" + coordinator + "\"}[" + d + "]))", t))
      drops += v;

  Json rows = Json::array();
  bool all_busy = true, any_low = false, any_io = false;
  double tcp_max = 0, rdma_total = 0;
  for (const auto& h : hosts) {
    double u = util.count(h) ? util[h] : -1, p = power.count(h) ? power[h] : -1;
    const auto& n = net[h];
    tcp_max = std::max(tcp_max, n.tcp_retx_max);
    rdma_total += n.rdma_retx_total;
    bool busy = u >= kHighUtil || p >= kActiveW;
    all_busy &= busy;
    any_low |= (u >= 0 && u < 20) && p < kBusyWaitMaxW;
    any_io |= io.count(h) && io[h] > 10;
    bool is_accused = std::find(accused.begin(), accused.end(), h) != accused.end();
    rows.push_back({{"host", h}, {"role", is_accused ? "accused" : "neighbour"}, {"util_pct", Round(u)}, {"power_w", Round(p)},
                    {"tcp_retx_max_per_s", Round(n.tcp_retx_max)}, {"rdma_retx", Round(n.rdma_retx_total)},
                    {"io_full_max_pct", Round(io.count(h) ? io[h] : 0)}, {"dirty_max_bytes", Round(dirty.count(h) ? dirty[h] : 0)},
                    {"mem_used_max_bytes", Round(mem.count(h) ? mem[h] : 0)}});
  }
  const bool net_clean = tcp_max <= 10 && rdma_total < 100;
  r.findings.push_back({{"rule", "accused hosts and neighbours busy until the crash (util ≥ 80 % or ≥ 700 W)"},
                        {"verdict", all_busy ? "busy" : any_low ? "idle hosts" : "mixed"},
                        {"evidence", {{"window", {IsoTime(r.window.start), IsoTime(r.window.end)}}, {"hosts", rows}}}});
  r.findings.push_back({{"rule", "no retransmit spike on those hosts (TCP ≤ 10/s, RDMA retx ≈ 0) and no listen drops on the coordinator"},
                        {"verdict", net_clean && drops < 1 ? "clean" : "spike"},
                        {"evidence", {{"tcp_retx_max_per_s", Round(tcp_max)}, {"rdma_retx_packets", Round(rdma_total)},
                                      {"coordinator", coordinator}, {"coordinator_listen_drops", Round(drops)}}}});
  r.findings.push_back({{"rule", "no I/O pressure stall (hw_io_pressure_full_pct ≤ 10 %)"},
                        {"verdict", any_io ? "pressure" : "clean"},
                        {"evidence", {{"hosts_over_10_pct", any_io}}}});
  if (all_busy && net_clean && drops < 1 && !any_io)
    r.verdict = "Confirmed false positive: the accused hosts and their neighbours drew ~" + Num(power.empty() ? 0 : [&] {
      double s = 0;
      for (auto& [k, v] : power) s += v;
      return s / power.size();
    }()) + " W with a clean network through the " + Num(r.window.seconds() / 60) + " minutes before the crash.";
  else if (all_busy)
    r.verdict = std::string("Likely false positive, triggered by ") + (net_clean ? "I/O pressure" : "a retransmit spike") + ".";
  else if (any_low)
    r.verdict = "Possibly a true positive: some accused hosts were idle before the crash.";
  else
    r.verdict = "Inconclusive: mixed activity on the accused hosts.";
  return r;
}

// ---- 7. training_stability ------------------------------------------------------------------
struct StepValue {
  long step;
  double v;
};
// Real (not filled) samples of a tb_* scalar, one per step.
std::vector<StepValue> TbByStep(TsdbContext& tsdb, const std::string& metric, TsdbWindow w) {
  const std::string d = PromDuration(w.seconds() + 60);
  auto vals = tsdb.Instant(metric + "[" + d + "]", w.end);
  auto fills = tsdb.Instant("tb_metrics_plugin_staleness_fill[" + d + "]", w.end);
  auto steps = tsdb.Instant("tb_step[" + d + "]", w.end);
  std::vector<StepValue> out;
  if (vals.empty() || steps.empty()) return out;
  std::map<double, double> fill, step;
  if (!fills.empty())
    for (const auto& p : fills[0].points) fill[p.t] = p.v;
  for (const auto& p : steps[0].points) step[p.t] = p.v;
  for (const auto& p : vals[0].points) {
    if (fill.count(p.t) && fill[p.t] != 0) continue;
    auto it = step.find(p.t);
    if (it == step.end()) continue;
    if (!out.empty() && out.back().step == static_cast<long>(it->second)) continue;
    out.push_back({static_cast<long>(it->second), p.v});
  }
  return out;
}

// TGS decline onset: the first step after which the 10-step rolling median stays below
// 98.5 % of the first third's median. Adds the TGS finding (with 30 samples or more).
std::optional<long> TgsDeclineOnset(const std::vector<StepValue>& tgs, ModeResult& r) {
  std::optional<long> onset;
  if (tgs.size() >= 30) {
    std::vector<double> base;
    for (size_t i = tgs.size() / 10; i < tgs.size() / 3; ++i) base.push_back(tgs[i].v);
    double b = Median(base);
    std::vector<double> roll(tgs.size());
    for (size_t i = 0; i < tgs.size(); ++i) {
      std::vector<double> win;
      for (size_t k = i; k < tgs.size() && k < i + 10; ++k) win.push_back(tgs[k].v);
      roll[i] = Median(win);
    }
    for (size_t i = tgs.size(); i-- > tgs.size() / 3;) {
      if (roll[i] >= 0.985 * b) {
        if (i + 1 < tgs.size() && tgs.back().v < 0.97 * b) onset = tgs[i + 1].step;
        break;
      }
    }
    Json ev = {{"baseline_tgs", Round(b)}, {"last_tgs", Round(tgs.back().v)}, {"change_pct", Round(100 * (tgs.back().v / b - 1), 3)},
               {"decline_onset_step", onset ? Json(*onset) : Json(nullptr)}};
    r.findings.push_back({{"rule", "TGS (tb_perf_per_device_tokens_per_sec, real samples only): > 10 % drop warrants investigation"},
                          {"verdict", tgs.back().v < 0.9 * b ? "declined > 10 %" : onset ? "declining" : "stable"},
                          {"evidence", ev}});
  }
  return onset;
}

// Training scalars: where does each change most? Adds the finding; returns the step at
// which tb_learning_moe_lb_loss changes, if it does.
std::optional<long> ScalarStepChanges(TsdbContext& tsdb, ModeResult& r) {
  Json changes = Json::array();
  std::optional<long> lb_change;
  for (const char* metric : {"tb_learning_moe_lb_loss", "tb_learning_loss", "tb_learning_grad_norm", "tb_perf_step_time_seconds"}) {
    auto v = TbByStep(tsdb, metric, r.window);
    if (v.size() < 10) continue;
    // The first steps (compilation, warm-up) always jump; look from step 10 on.
    size_t from = 0;
    while (from + 1 < v.size() && v[from].step < 10) ++from;
    v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(from));
    if (v.size() < 10) continue;
    std::vector<double> diffs;
    for (size_t i = 1; i < v.size(); ++i) diffs.push_back(std::fabs(v[i].v - v[i - 1].v));
    double typical = Median(diffs);
    size_t best = 0;
    for (size_t i = 1; i < diffs.size(); ++i)
      if (diffs[i] > diffs[best]) best = i;
    double score = diffs[best] / std::max(typical, 1e-12 + 1e-6 * std::fabs(v[best].v));
    if (score < 8) continue;   // no step-change stands out
    long at = v[best + 1].step;
    if (std::string(metric) == "tb_learning_moe_lb_loss") lb_change = at;
    changes.push_back({{"metric", metric}, {"step", at}, {"from", Round(v[best].v)}, {"to", Round(v[best + 1].v)}, {"score", Round(score, 3)}});
  }
  r.findings.push_back({{"rule", "training scalars (tb_*, staleness_fill == 0): step changes"},
                        {"verdict", changes.empty() ? "none" : "changes"},
                        {"evidence", {{"changes", changes}}}});
  return lb_change;
}

// Before vs after the decline onset at `split` (the cluster mean of `expr`), as a fraction;
// 0 when the onset is within 10 minutes of the window's ends or there is no data.
double ChangeAtOnset(TsdbContext& tsdb, const std::string& expr, const TsdbWindow& w, double split) {
  double change = 0;
  if (split > w.start + 600 && split < w.end - 600) {
    auto before = tsdb.Instant("avg(avg_over_time((" + expr + ")[" + PromDuration(split - w.start) + ":60s]))", split);
    auto after = tsdb.Instant("avg(avg_over_time((" + expr + ")[" + PromDuration(w.end - split) + ":60s]))", w.end);
    if (!before.empty() && !after.empty() && !before[0].points.empty() && !after[0].points.empty()) {
      double a = before[0].points.back().v, b = after[0].points.back().v;
      change = (b - a) / std::max(std::fabs(a), 1e-9);
      if (std::fabs(a) < 1e-6 && std::fabs(b) < 1e-6) change = 0;
    }
  }
  return change;
}

// Contention checklist: every system family, per host, over the window. Adds the finding
// and the outliers; returns how many families are not clean.
int ContentionChecklist(TsdbContext& tsdb, std::optional<long> onset, ModeResult& r) {
  tsdb.Progress("training_stability: contention checklist");
  const std::vector<std::pair<std::string, std::string>> families = {
      {"hw_procs_running", "avg by (host) (hw_procs_running)"},
      {"hw_procs_blocked", "avg by (host) (hw_procs_blocked)"},
      {"rate(hw_context_switches_total)", "sum by (host) (rate(hw_context_switches_total[5m]))"},
      {"ray_node_cpu_utilization", "avg by (host) (ray_node_cpu_utilization)"},
      {"hw_gpu_user_processes", "avg by (host) (hw_gpu_user_processes)"},
      {"rate(hw_tcp_retransmits_total)", "sum by (host) (rate(hw_tcp_retransmits_total[5m]))"},
      {"rate(hw_rdma_tx_retx_pkts_total)", "sum by (host) (rate(hw_rdma_tx_retx_pkts_total[5m]))"},
      {"hw_io_pressure_full_pct", "max by (host) (hw_io_pressure_full_pct)"},
      {"hw_mem_dirty_bytes", "max by (host) (hw_mem_dirty_bytes)"},
      {"ray_node_mem_used", "max by (host) (ray_node_mem_used)"},
      {"hw_gpu_temperature_celsius", "max by (host) (hw_gpu_temperature_celsius)"},
      {"hw_gpu_power_watts", "avg by (host) (hw_gpu_power_watts)"},
  };
  Json fam = Json::array();
  int dirty_families = 0;
  double split = onset ? tsdb.TimeOfStep(*onset).value_or(0) : 0;
  for (const auto& [name, expr] : families) {
    auto per = tsdb.PerHostRange(expr, r.window);
    if (per.empty()) continue;
    std::vector<double> means;
    std::vector<std::string> hs;
    for (auto& [h, st] : per) means.push_back(st.mean), hs.push_back(h);
    auto sc = RobustScores(means, 1e-6);
    double base = Median(means);
    std::vector<std::string> odd;
    for (size_t i = 0; i < sc.size(); ++i)
      if (std::fabs(sc[i]) >= 3.5 && std::fabs(means[i] - base) > 0.1 * std::max(std::fabs(base), 1.0)) {
        odd.push_back(hs[i]);
        AddOutlier(r.outliers, hs[i], "", name, means[i], base, sc[i]);
      }
    const double change = ChangeAtOnset(tsdb, expr, r.window, split);
    bool clean = odd.empty() && std::fabs(change) <= 0.10;
    dirty_families += !clean;
    fam.push_back({{"family", name}, {"clean", clean}, {"median", Round(base)}, {"outlier_hosts", odd},
                   {"change_after_onset_pct", Round(100 * change, 3)}});
  }
  r.findings.push_back({{"rule", "contention checklist: no host outlier and no > 10 % shift at the decline onset in any system family"},
                        {"verdict", dirty_families == 0 ? "clean" : std::to_string(dirty_families) + " famil" + (dirty_families == 1 ? "y" : "ies") + " not clean"},
                        {"evidence", {{"families", fam}}}});
  return dirty_families;
}

std::string StabilityVerdict(std::optional<long> onset, std::optional<long> lb_change, int dirty_families) {
  std::string v;
  if (!onset) v = "TGS is stable over the window";
  else v = "TGS declines from step " + std::to_string(*onset);
  if (lb_change) v += "; tb_learning_moe_lb_loss changes at step " + std::to_string(*lb_change);
  v += dirty_families == 0 ? "; every system family is clean, so the cause is in the training itself (MoE routing), not the cluster."
                           : "; " + std::to_string(dirty_families) + " system famil" + (dirty_families == 1 ? "y shows" : "ies show") + " contention (see outliers).";
  return v;
}

ModeResult TrainingStability(TsdbContext& tsdb, const Json& triage, std::optional<TsdbWindow> given) {
  ModeResult r;
  r.window = given ? tsdb.Clamp(*given) : tsdb.data();
  tsdb.Progress("training_stability: tb scalars");
  auto tgs = TbByStep(tsdb, "tb_perf_per_device_tokens_per_sec", r.window);
  const std::optional<long> onset = TgsDeclineOnset(tgs, r);
  const std::optional<long> lb_change = ScalarStepChanges(tsdb, r);
  const int dirty_families = ContentionChecklist(tsdb, onset, r);
  if (onset && lb_change)
    r.findings.push_back({{"rule", "tb_learning_moe_lb_loss changes where TGS starts declining"},
                          {"verdict", std::labs(*onset - *lb_change) <= 50 ? "coincides" : "apart"},
                          {"evidence", {{"lb_loss_change_step", *lb_change}, {"tgs_decline_onset_step", *onset}}}});
  r.verdict = StabilityVerdict(onset, lb_change, dirty_families);
  (void)triage;
  return r;
}

// ---- 3. host_oom ----------------------------------------------------------------------------
ModeResult HostOom(TsdbContext& tsdb, const Json& triage, std::optional<TsdbWindow> given) {
  ModeResult r;
  auto end = TriageTime(triage, {"progress", "last_progress_time"});
  r.window = given ? tsdb.Clamp(*given) : tsdb.Clamp({(end ? *end + 600 : tsdb.data().end) - 7200, end ? *end + 600 : tsdb.data().end});
  const std::string d = PromDuration(r.window.seconds());
  auto mem = tsdb.PerHostRange("max by (host) (ray_node_mem_used)", r.window);
  auto total = tsdb.PerHost("max by (host) (max_over_time(ray_node_mem_total[" + d + "]))", r.window.end);
  auto oom = tsdb.PerHost("sum by (host) (increase(hw_oom_kills_total[" + d + "]))", r.window.end);
  auto blocked = tsdb.PerHost("max by (host) (max_over_time(hw_procs_blocked[" + d + "]))", r.window.end);
  auto io = tsdb.PerHost("max by (host) (max_over_time(hw_io_pressure_full_pct[" + d + "]))", r.window.end);
  std::vector<std::string> killed;
  Json rows = Json::array();
  int ramps = 0, sudden = 0;
  for (auto& [h, st] : mem) {
    double t = total.count(h) ? total[h] : 0;
    double growth = st.last - st.first;
    bool ramp = t > 0 && growth > 0.2 * t;
    bool jump = t > 0 && st.max - st.min > 0.2 * t && !ramp;
    ramps += ramp;
    sudden += jump;
    if (oom[h] >= 1) killed.push_back(h);
    if (oom[h] >= 1 || ramp || jump || (t > 0 && st.max > 0.9 * t))
      rows.push_back({{"host", h}, {"mem_first", Round(st.first)}, {"mem_max", Round(st.max)}, {"mem_total", Round(t)},
                      {"oom_kills", Round(oom[h])}, {"procs_blocked_max", Round(blocked[h])}, {"io_full_max_pct", Round(io[h])}});
  }
  r.findings.push_back({{"rule", "OOM kills in the window (increase(hw_oom_kills_total))"},
                        {"verdict", killed.empty() ? "none" : std::to_string(killed.size()) + " host(s)"},
                        {"evidence", {{"hosts", killed}}}});
  r.findings.push_back({{"rule", "host memory pattern: gradual ramp = leak; sudden = checkpoint D2H / data / recompilation; all nodes = data pipeline"},
                        {"verdict", ramps ? "ramp" : sudden ? "sudden" : "flat"},
                        {"evidence", {{"hosts_ramping", ramps}, {"hosts_sudden", sudden}, {"hosts", rows}}}});
  r.verdict = killed.empty() && rows.empty() ? "No host memory pressure and no OOM kill in the window."
              : !killed.empty()             ? "Host OOM on " + std::to_string(killed.size()) + " host(s) (" + killed.front() + "…)."
                                            : "Host memory under pressure on " + std::to_string(rows.size()) + " host(s), no OOM kill.";
  return r;
}

// ---- 4. node_failure --------------------------------------------------------------------------
ModeResult NodeFailure(TsdbContext& tsdb, const Json& triage, std::optional<TsdbWindow> given) {
  ModeResult r;
  (void)triage;
  r.window = given ? tsdb.Clamp(*given) : tsdb.data();
  const std::string d = PromDuration(r.window.seconds());
  struct Check {
    const char* name;
    std::string expr;
    bool drain;
  };
  const std::vector<Check> checks = {
      {"uncorrectable ECC (RAS umc/xgmi/gfx UE)", "sum by (host) (increase(hw_gpu_ras_umc_ue_total[" + d + "]) or increase(hw_gpu_ras_xgmi_ue_total[" + d + "]) or increase(hw_gpu_ras_gfx_ue_total[" + d + "]))", true},
      {"correctable ECC (RAS umc/xgmi CE)", "sum by (host) (increase(hw_gpu_ras_umc_ce_total[" + d + "]) or increase(hw_gpu_ras_xgmi_ce_total[" + d + "]))", false},
      {"PCIe fatal errors", "sum by (host) (increase(hw_gpu_pcie_fatal_total[" + d + "]))", true},
      {"GPU errors in dmesg", "sum by (host) (increase(hw_dmesg_gpu_errors_total[" + d + "]))", false},
      {"RDMA port down", "count by (host) (min_over_time(hw_rdma_port_state[" + d + "]) == 0)", true},
  };
  std::set<std::string> drain;
  for (const auto& c : checks) {
    auto v = tsdb.PerHost(c.expr, r.window.end);
    std::vector<std::string> hs;
    for (auto& [h, x] : v)
      if (x >= 1) {
        hs.push_back(h);
        if (c.drain) drain.insert(h);
        AddOutlier(r.outliers, h, "", c.name, x, 0, x);
      }
    r.findings.push_back({{"rule", std::string(c.name) + (c.drain ? " > 0 → drain" : " rising → degrading")},
                          {"verdict", hs.empty() ? "none" : std::to_string(hs.size()) + " host(s)"},
                          {"evidence", {{"hosts", hs}}}});
  }
  auto temp = tsdb.PerHost("max by (host) (max_over_time(hw_gpu_temperature_celsius[" + d + "]))", r.window.end);
  double tmax = 0;
  for (auto& [h, x] : temp) tmax = std::max(tmax, x);
  r.findings.push_back({{"rule", "GPU temperature (> 100 °C throttles)"}, {"verdict", tmax > 100 ? "throttling" : tmax > 90 ? "hot" : "ok"},
                        {"evidence", {{"max_celsius", Round(tmax)}}}});
  std::string list;
  for (const auto& h : drain) list += (list.empty() ? "" : ", ") + h;
  r.verdict = drain.empty() ? "No hardware fault in the window (no UE, PCIe fatal or port down)."
                            : "Hardware fault: drain " + list + ".";
  return r;
}

// ---- 5. gpu_health ------------------------------------------------------------------------------
ModeResult GpuHealth(TsdbContext& tsdb, const Json& triage, std::optional<TsdbWindow> given) {
  ModeResult r;
  (void)triage;
  r.window = given ? tsdb.Clamp(*given) : tsdb.Clamp({tsdb.data().end - 3600, tsdb.data().end});
  const std::string d = PromDuration(r.window.seconds());
  const double t = r.window.end;
  auto temp = PerGpu(tsdb, "max_over_time(hw_gpu_temperature_celsius[" + d + "])", t);
  auto power = PerGpu(tsdb, "avg_over_time(hw_gpu_power_watts[" + d + "])", t);
  auto sclk = PerGpu(tsdb, "min_over_time(hw_gpu_clock_mhz{type=\"sclk\"}[" + d + "])", t);
  auto vram = PerGpu(tsdb, "max_over_time(hw_gpu_vram_used_bytes[" + d + "]) / max_over_time(hw_gpu_vram_total_bytes[" + d + "])", t);
  auto util = PerGpu(tsdb, "avg_over_time(ray_node_gpus_utilization[" + d + "])", t);
  auto ras = tsdb.PerHost("sum by (host) (increase(hw_gpu_ras_umc_ce_total[" + d + "]) or increase(hw_gpu_ras_umc_ue_total[" + d + "]) or increase(hw_gpu_ras_xgmi_ce_total[" + d + "]))", t);
  Summary ts = Summarise(temp), ps = Summarise(power), cs = Summarise(sclk), vs = Summarise(vram), us = Summarise(util);
  double ras_total = 0;
  for (auto& [h, v] : ras) ras_total += v;
  r.findings.push_back({{"rule", "temperature (> 90 °C concern, > 100 °C throttle)"}, {"verdict", ts.max > 100 ? "throttle" : ts.max > 90 ? "concern" : "ok"}, {"evidence", SummaryJson(ts)}});
  r.findings.push_back({{"rule", "power spread across GPUs (> 50 W is suspicious)"}, {"verdict", ps.max - ps.min > 50 ? "spread" : "ok"}, {"evidence", SummaryJson(ps)}});
  r.findings.push_back({{"rule", "sclk drops"}, {"verdict", cs.n && cs.min < 0.8 * cs.max ? "drops" : "ok"}, {"evidence", SummaryJson(cs)}});
  r.findings.push_back({{"rule", "VRAM used / total (> 95 %)"}, {"verdict", vs.max > 0.95 ? "high" : "ok"}, {"evidence", SummaryJson(vs)}});
  r.findings.push_back({{"rule", "utilization (< 80 %)"}, {"verdict", us.n && us.min < 80 ? "low on some GPUs" : "ok"}, {"evidence", SummaryJson(us)}});
  r.findings.push_back({{"rule", "RAS error counts in the window"}, {"verdict", ras_total > 0 ? "errors" : "none"}, {"evidence", {{"total", Round(ras_total)}}}});
  GpuOutliers(r.outliers, temp, "hw_gpu_temperature_celsius");
  GpuOutliers(r.outliers, power, "hw_gpu_power_watts");
  GpuOutliers(r.outliers, sclk, "hw_gpu_clock_mhz{type=\"sclk\"}");
  int bad = 0;
  for (const auto& f : r.findings) bad += f["verdict"] != "ok" && f["verdict"] != "none";
  r.verdict = bad == 0 ? "GPUs healthy: " + std::to_string(ts.n) + " GPUs, max " + Num(ts.max) + " °C, ~" + Num(ps.mean) + " W, no RAS errors."
                       : std::to_string(bad) + " GPU health check(s) flagged; see findings and outliers.";
  return r;
}

}  // namespace

const std::vector<std::string>& PlaybookNames() {
  static const std::vector<std::string> n = {"hang", "heartbeat", "host_oom", "node_failure", "gpu_health", "network_health", "training_stability"};
  return n;
}

std::string PlaybookForClass(const std::string& c) {
  if (c == "hang") return "hang";
  if (c.rfind("heartbeat", 0) == 0) return "heartbeat";
  if (c.find("oom") != std::string::npos && c.find("host") != std::string::npos) return "host_oom";
  if (c == "node_fail" || c == "node_failure" || c == "signal_kill") return "node_failure";
  if (c.find("nccl") != std::string::npos || c.find("nic") != std::string::npos) return "network_health";
  if (c == "unknown_death" || c == "unknown") return "node_failure";
  return "training_stability";
}

ModeResult RunPlaybook(TsdbContext& tsdb, const std::string& name, const Json& triage, std::optional<TsdbWindow> window) {
  if (name == "hang") return Hang(tsdb, triage, window);
  if (name == "heartbeat") return Heartbeat(tsdb, triage, window);
  if (name == "host_oom") return HostOom(tsdb, triage, window);
  if (name == "node_failure") return NodeFailure(tsdb, triage, window);
  if (name == "gpu_health") return GpuHealth(tsdb, triage, window);
  if (name == "network_health") return NetworkHealth(tsdb, triage, window);
  if (name == "training_stability") return TrainingStability(tsdb, triage, window);
  throw std::invalid_argument("unknown playbook '" + name + "'");
}

}  // namespace mt::tools
