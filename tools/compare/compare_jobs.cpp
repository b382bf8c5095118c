#include "tools/compare/compare_jobs.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "tools/compare/compare_config.h"
#include "tools/compare/compare_trace.h"
#include "tools/compare/compare_tsdb.h"
#include "tools/compare/pair_diagnosis.h"
#include "tools/perf/perf_analysis.h"
#include "tools/tsdb/prometheus_client.h"
#include "tools/logs/scan_cache.h"
#include "tools/common/stats.h"
#include "tools/tsdb/tsdb_blocks.h"
#include "tools/tsdb/tsdb_context.h"
#include "tools/tsdb/tsdb_series.h"
#include "tools/logs/triage.h"

namespace mt::tools {
namespace {

constexpr double kSpikeFraction = 0.10;   // a step this far from its neighbours' median
constexpr double kTgsT = 5;
constexpr double kTgsMinPct = 0.5;

std::filesystem::path LogOf(const JobFiles& j) {
  if (!j.log.empty()) return j.log;
  if (!j.rank_logs.empty()) return j.rank_logs.front();
  throw std::runtime_error("job " + j.id + " has no log yet, so there is nothing to compare");
}

// TGS of the steps in [lo, hi], isolated spikes (more than 10 % from the median of the 7
// steps around them: checkpoint saves, one-off stalls) excluded.
std::vector<double> SteadyValues(const LogScan& s, int64_t lo, int64_t hi, size_t* spikes) {
  std::vector<double> raw;
  for (const auto& st : s.steps)
    if (st.step >= lo && st.step <= hi && st.tgs_n) raw.push_back(st.tgs());
  std::vector<double> out;
  *spikes = 0;
  for (size_t i = 0; i < raw.size(); ++i) {
    size_t a = i >= 3 ? i - 3 : 0, b = std::min(raw.size(), i + 4);
    std::vector<double> win(raw.begin() + static_cast<std::ptrdiff_t>(a), raw.begin() + static_cast<std::ptrdiff_t>(b));
    double med = Quantile(win, 0.5);
    if (med > 0 && std::fabs(raw[i] - med) > kSpikeFraction * med) ++*spikes;
    else out.push_back(raw[i]);
  }
  return out;
}

bool Failed(const std::string& status) { return status == "failed" || status == "hang" || status == "unknown"; }

struct JobInfo {
  const JobFiles* job;
  Json triage;
  std::shared_ptr<const CachedScan> scan;
};

int InitWavesDuring(const LogScan& s) {
  int n = 0;
  for (const auto& w : s.init_waves)
    if (w.after_step >= 0) ++n;
  return n;
}

// Long steps after warm-up that are not at a checkpoint save: recompilation-like stalls.
size_t Stalls(const LogScan& s, int warmup) {
  std::vector<double> sec;
  for (size_t i = static_cast<size_t>(warmup); i < s.steps.size(); ++i)
    if (s.steps[i].seconds > 0) sec.push_back(s.steps[i].seconds);
  if (sec.size() < 10) return 0;
  double med = Quantile(sec, 0.5);
  size_t n = 0;
  for (size_t i = static_cast<size_t>(warmup); i < s.steps.size(); ++i) {
    if (s.steps[i].seconds <= 3 * med) continue;
    bool at_ckpt = false;
    for (int64_t c : s.checkpoint_steps) at_ckpt |= std::llabs(c - s.steps[i].step) <= 1;
    if (!at_ckpt) ++n;
  }
  return n;
}

// Log events that differ. Counts that depend on how many steps a job ran (checkpoint saves)
// are taken over the overlapping step range [lo, hi] when there is one.
std::vector<LogDiffRow> LogDiff(const LogScan& a, const LogScan& b, int warmup, const std::string& id_b, int64_t lo,
                                int64_t hi) {
  std::vector<LogDiffRow> out;
  auto add = [&](const std::string& item, Json va, Json vb, const std::string& note) {
    if (va != vb) out.push_back(LogDiffRow{item, std::move(va), std::move(vb), note});
  };
  int wa = static_cast<int>(a.init_waves.size()), wb = static_cast<int>(b.init_waves.size());
  std::string note;
  if (wb != wa) {
    int extra = wb - wa;
    note = id_b + " has " + std::to_string(std::abs(extra)) + (extra > 0 ? " more" : " fewer") + " RCCL/NCCL communicator-initialisation wave" +
           (std::abs(extra) == 1 ? "" : "s");
    if (extra > 0 && b.restored_step && !a.restored_step)
      note += ", during its checkpoint restore (from step " + std::to_string(*b.restored_step) + ")" +
              (b.single_replica_restore ? "; single-replica restore broadcasts through extra communicators that are never destroyed" : "");
    else if (extra > 0 && InitWavesDuring(b) > InitWavesDuring(a))
      note += ", during training (communicators re-created)";
  }
  add("rccl_init_waves", wa, wb, note);
  add("rccl_init_waves_during_training", InitWavesDuring(a), InitWavesDuring(b), "waves after the first completed step");
  add("checkpoint_restore_step", a.restored_step ? Json(*a.restored_step) : Json(nullptr), b.restored_step ? Json(*b.restored_step) : Json(nullptr),
      "the job started from a checkpoint");
  add("single_replica_restore", a.single_replica_restore, b.single_replica_restore,
      "enable_single_replica_ckpt_restoring: known to leak RCCL communicators (~17 extra runnable threads per host, ~1 % TGS)");
  auto saves = [&](const LogScan& x) {
    size_t n = 0;
    for (int64_t c : x.checkpoint_steps) n += lo < 0 || (c >= lo && c <= hi);
    return n;
  };
  add("checkpoint_saves", saves(a), saves(b),
      lo < 0 ? "\"Saved a checkpoint\" steps" : "\"Saved a checkpoint\" steps within the compared steps " + std::to_string(lo) + "–" + std::to_string(hi));
  add("step_stalls_outside_checkpoints", Stalls(a, warmup), Stalls(b, warmup),
      "steps over 3x the median step time not at a checkpoint save (recompilation-like)");
  add("tracebacks", a.tracebacks_total, b.tracebacks_total, "Python tracebacks in the log");
  size_t nan_a = 0, nan_b = 0;
  for (const auto& s : a.steps) nan_a += std::isnan(s.loss);
  for (const auto& s : b.steps) nan_b += std::isnan(s.loss);
  add("nan_loss_steps", nan_a, nan_b, "steps with loss nan");
  std::map<std::string, uint64_t> sa, sb;
  // Failure signatures only (informational kinds such as checkpoint_saved have no class).
  for (const auto& [k, v] : a.signatures)
    if (!v.cls.empty()) sa[k] = v.count;
  for (const auto& [k, v] : b.signatures)
    if (!v.cls.empty()) sb[k] = v.count;
  std::map<std::string, bool> keys;
  for (auto& [k, _] : sa) keys[k] = true;
  for (auto& [k, _] : sb) keys[k] = true;
  for (auto& [k, _] : keys) add("signature " + k, sa[k], sb[k], "failure-signature lines");
  return out;
}

CompareMetric FromMetric(const MetricComparison& m) {
  CompareMetric j;
  j.metric = m.metric;
  j.kind = m.kind;
  j.a = Round(m.a, 5);
  j.b = Round(m.b, 5);
  j.a_mean = Round(m.a_mean, 5);
  j.b_mean = Round(m.b_mean, 5);
  j.delta = Round(m.delta, 4);
  j.delta_pct = Round(m.delta_pct, 4);
  j.hosts_consistent = m.hosts_consistent;
  j.significant = m.significant;
  j.pattern = m.pattern;
  j.score = Round(m.score, 3);
  j.unit = m.counter ? "per second" : "median";
  j.hosts_compared = std::to_string(m.hosts_a) + "/" + std::to_string(m.hosts_b);
  if (!m.hosts.empty()) {
    j.hosts_in = m.hosts_in;
    j.hosts.emplace();
    for (const auto& [host, v] : m.hosts) j.hosts->push_back(HostValue{host, Round(v, 4)});
  }
  return j;
}

template <class T>
Nullable<double> RoundIf(bool ok, T v, int digits) {
  if (!ok) return std::nullopt;
  return Round(static_cast<double>(v), digits);
}

Nullable<int64_t> IntOrNull(const Json& v) {
  if (!v.is_number_integer()) return std::nullopt;
  return v.get<int64_t>();
}

std::string Pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f %%", v);
  return b;
}

// TGS of A and B over their overlapping steady steps; `caveats` say which side failed.
CompareTgsAnswer TgsAnswer(const TgsComparison& tg, const std::vector<std::string>& caveats) {
  CompareTgsAnswer g;
  g.a = RoundIf(tg.ok, tg.a, 6);
  g.b = RoundIf(tg.ok, tg.b, 6);
  g.delta_pct = RoundIf(tg.ok, tg.delta_pct, 3);
  g.a_std = Round(tg.a_std, 3);
  g.b_std = Round(tg.b_std, 3);
  if (tg.first_step >= 0) g.steps = std::vector<int64_t>{tg.first_step, tg.last_step};
  g.n = {static_cast<int64_t>(tg.a_n), static_cast<int64_t>(tg.b_n)};
  g.spikes_excluded = {static_cast<int64_t>(tg.a_spikes), static_cast<int64_t>(tg.b_spikes)};
  g.t = RoundIf(std::isfinite(tg.t), tg.t, 3);
  g.significant = tg.significant;
  g.comparable = tg.ok && caveats.empty();
  if (!caveats.empty()) g.caveats = caveats;
  return g;
}

// The TSDB sweep over the steady range, or why there is none.
struct SweepOutcome {
  CompareTsdbUse use;
  ContentionSweepResult sweep;
  std::vector<CompareMetric> metrics;   // what the answer shows (significant first, capped)
  int64_t significant = 0;
  const MetricComparison* top = nullptr;   // into sweep.metrics: the strongest, if significant
};

void SweepTsdbs(const JobInfo& A, const JobInfo& B, const std::string& ida, const std::string& idb, const TgsComparison& tg,
                const CompareOptions& opt, TsdbManager* manager, mcp::CallContext* call, SweepOutcome* out) {
  if (!opt.source && (!A.job->has_tsdb || !B.job->has_tsdb)) {
    std::string who = !A.job->has_tsdb && !B.job->has_tsdb ? "neither job has a" : ("job " + (!A.job->has_tsdb ? ida : idb) + " has no");
    out->use.reason = who + " Prometheus TSDB (<job dir>/prometheus with blocks or a wal)";
    return;
  }
  if (!opt.use_tsdb || manager == nullptr) {
    out->use.reason = "TSDB comparison not requested";
    return;
  }
  if (!tg.ok) {
    out->use.reason = "no overlapping steady step range to align the TSDBs on";
    return;
  }
  try {
    ContentionSide xa{A.job, tg.first_step, tg.last_step, MayBeRunning(A.triage), opt.source};
    ContentionSide xb{B.job, tg.first_step, tg.last_step, MayBeRunning(B.triage), opt.source};
    out->sweep = ContentionSweep(xa, xb, *manager, call);
    const ContentionSweepResult& sweep = out->sweep;
    out->use = CompareTsdbUse{true, std::nullopt, sweep.windows, static_cast<int64_t>(sweep.metrics.size()), sweep.queries,
                              std::nullopt};
    for (const auto& m : sweep.metrics) {
      if (m.significant) ++out->significant;
      if (out->metrics.size() < opt.max_metrics && (m.significant || out->metrics.size() < 3))
        out->metrics.push_back(FromMetric(m));
    }
    if (!sweep.metrics.empty() && sweep.metrics.front().significant) out->top = &sweep.metrics.front();
    out->use.significant = out->significant;
  } catch (const std::exception& e) {
    *out = SweepOutcome{};
    out->use.reason = std::string("TSDB comparison failed: ") + e.what();
  }
}

// The verdict line: the throughput difference, then the strongest evidence.
std::string PairVerdictLine(const std::string& ida, const std::string& idb, const TgsComparison& tg, const SweepOutcome& sw,
                            const std::vector<LogDiffRow>& log_diff, const std::vector<ConfigDifference>& cfg,
                            const std::vector<std::string>& caveats) {
  std::string v;
  if (tg.ok) {
    v = idb + " vs " + ida + ": steady TGS " + Num(tg.b) + " vs " + Num(tg.a) + " (" + Pct(tg.delta_pct) + ") over steps " +
        std::to_string(tg.first_step) + "–" + std::to_string(tg.last_step);
    v += tg.significant ? "" : ", within noise";
  } else {
    v = idb + " vs " + ida + ": throughput not comparable";
  }
  if (const MetricComparison* top = sw.top) {
    v += "; top difference: " + top->metric + (top->counter ? " (per second)" : "");
    if (top->pattern == "uniform") {
      v += " " + Num(top->a) + " → " + Num(top->b) +
           (top->hosts_consistent ? " on every host (" + std::to_string(top->hosts_common) + " hosts)" : " (median over hosts)");
    } else {
      std::string who = top->hosts_in == "a" ? ida : top->hosts_in == "b" ? idb : ida + " and " + idb;
      v += " on ";
      for (size_t i = 0; i < top->hosts.size(); ++i) v += (i ? ", " : "") + top->hosts[i].first + " " + Num(top->hosts[i].second);
      v += " in " + who + " (other hosts ~" + Num(top->hosts_in == "a" ? top->b : top->a) + ")";
    }
  } else if (sw.use.used) {
    v += "; no significant TSDB difference";
  }
  for (const auto& d : log_diff)
    if (d.item == "rccl_init_waves") v += "; RCCL init waves " + d.a.dump() + " vs " + d.b.dump();
  if (!cfg.empty()) {
    v += "; config differs in ";
    for (size_t i = 0; i < cfg.size() && i < 3; ++i) v += (i ? ", " : "") + cfg[i].key;
    if (cfg.size() > 3) v += " (+" + std::to_string(cfg.size() - 3) + ")";
  }
  if (!caveats.empty()) v += "; caution: " + caveats[0];
  return v;
}

std::string IdOf(const JobFiles& j) { return j.id.empty() ? j.name : j.id; }

// A vs one other job.
CompareAnswer ComparePair(const Workspace& ws, const JobInfo& A, const JobInfo& B, const CompareOptions& opt,
                          TsdbManager* manager, mcp::CallContext* call) {
  const LogScan& a = A.scan->scan;
  const LogScan& b = B.scan->scan;
  const std::string ida = IdOf(*A.job), idb = IdOf(*B.job);
  CompareAnswer out;
  out.a = ida;
  out.b = idb;

  TgsComparison tg = CompareTgs(a, b, opt.warmup_steps);
  std::vector<std::string> caveats;
  for (const JobInfo* j : {&A, &B}) {
    std::string st = j->triage.value("status", "");
    if (Failed(st))
      caveats.push_back("job " + IdOf(*j->job) + " is " + st + " (" + j->triage.value("class", "") +
                        "): its throughput covers only the steps it completed before it stopped");
  }
  out.tgs = TgsAnswer(tg, caveats);
  if (!tg.ok) out.notes.push_back("no overlapping steady steps with Tokens/s/device: TGS not compared");

  std::string na = a.header.count("NNODES") ? a.header.at("NNODES") : "", nb = b.header.count("NNODES") ? b.header.at("NNODES") : "";
  if (!na.empty() && !nb.empty() && na != nb)
    out.notes.push_back("different node counts (" + na + " vs " + nb + "): TGS is per device, so it compares; per-host metrics compare the hosts each job had");

  SweepOutcome sw;
  SweepTsdbs(A, B, ida, idb, tg, opt, manager, call, &sw);
  for (const auto& n : sw.sweep.notes) out.notes.push_back(n);
  if (!sw.use.used) out.notes.push_back("compared from the logs only: " + sw.use.reason.value_or(""));

  auto cfg = DiffConfigs(ws, *A.job, a, *B.job, b);
  out.log_diff = LogDiff(a, b, opt.warmup_steps, idb, tg.ok ? tg.first_step : -1, tg.ok ? tg.last_step : -1);
  out.verdict = PairVerdictLine(ida, idb, tg, sw, out.log_diff, cfg, caveats);
  out.config_diff = ConfigDiffRows(cfg);
  out.metrics = std::move(sw.metrics);
  out.metrics_significant = sw.significant;
  out.tsdb = sw.use;
  out.SetDiagnosis(PairDiagnosis(sw.sweep, sw.use.used));
  out.trace = CompareJobTraces(*A.job, *B.job, &out.notes);
  return out;
}

}  // namespace

TgsComparison CompareTgs(const LogScan& a, const LogScan& b, int warmup_steps) {
  TgsComparison c;
  if (a.steps.empty() || b.steps.empty()) return c;
  size_t w = static_cast<size_t>(std::max(0, warmup_steps));
  if (a.steps.size() <= w || b.steps.size() <= w) return c;
  int64_t lo = std::max(a.steps[w].step, b.steps[w].step);
  int64_t hi = std::min(a.steps.back().step, b.steps.back().step);
  if (hi < lo) return c;
  std::vector<double> va = SteadyValues(a, lo, hi, &c.a_spikes), vb = SteadyValues(b, lo, hi, &c.b_spikes);
  if (va.size() < 3 || vb.size() < 3) return c;
  StatSummary sa = Summarize(va), sb = Summarize(vb);
  c.ok = true;
  c.first_step = lo;
  c.last_step = hi;
  c.a = sa.mean, c.b = sb.mean, c.a_std = sa.std, c.b_std = sb.std, c.a_n = sa.n, c.b_n = sb.n;
  c.delta_pct = sa.mean != 0 ? 100 * (sb.mean - sa.mean) / sa.mean : 0;
  c.t = WelchT(sa, sb);
  c.significant = std::fabs(c.t) >= kTgsT && std::fabs(c.delta_pct) >= kTgsMinPct;
  return c;
}

CompareAnswer CompareJobs(const Workspace& ws, const std::vector<JobFiles>& jobs, const CompareOptions& opt,
                          TsdbManager* manager, mcp::CallContext* call) {
  if (jobs.size() < 2) throw std::invalid_argument("compare needs at least two jobs");
  if (jobs.size() > 8) throw std::invalid_argument("compare takes at most 8 jobs");
  if (opt.warmup_steps < 0 || opt.warmup_steps > 100000) throw std::invalid_argument("warmup_steps must be between 0 and 100000");
  std::vector<JobInfo> info;
  std::vector<CompareJobRow> triaged;
  for (const auto& j : jobs) {
    JobInfo ji{&j, Json(), nullptr};
    Json targs = Json::object();
    std::string now = !opt.now.empty() ? opt.now : DefaultJudgeTime(j);
    if (!now.empty()) targs["now"] = now;
    ji.triage = TriageLogStructured(j, targs);   // triage every job first
    ji.scan = ScanCache::Shared().Get(LogOf(j)).data;
    triaged.push_back(CompareJobRow{IdOf(j), ji.triage.value("status", ""), ji.triage.value("class", ""),
                                    IntOrNull(ji.triage["first_step"]), IntOrNull(ji.triage["last_step"]),
                                    IntOrNull(ji.triage["job"]["nodes"])});
    info.push_back(std::move(ji));
  }
  for (size_t i = 0; i < info.size(); ++i)
    for (size_t k = i + 1; k < info.size(); ++k)
      if (info[i].job->log == info[k].job->log && !info[i].job->log.empty())
        throw std::invalid_argument("job " + jobs[i].id + " is given twice");

  CompareAnswer out = ComparePair(ws, info[0], info[1], opt, manager, call);
  out.jobs = std::move(triaged);
  if (info.size() > 2) {
    out.more.emplace();
    for (size_t i = 2; i < info.size(); ++i) {
      CompareAnswer p = ComparePair(ws, info[0], info[i], opt, manager, call);
      CompareMore slim{p.b, CompareMoreTgs{p.tgs.a, p.tgs.b, p.tgs.delta_pct, p.tgs.significant}, p.config_diff, {}, p.log_diff,
                       p.verdict};
      for (size_t k = 0; k < p.metrics.size() && k < 3; ++k) slim.metrics.push_back(p.metrics[k]);
      out.more->push_back(std::move(slim));
    }
  }
  return out;
}

std::string CompareText(const Json& s) {
  auto str = [](const Json& v) -> std::string {
    if (v.is_null()) return "-";
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_float()) return Num(v.get<double>());
    return v.dump();
  };
  std::string t = str(s["verdict"]);
  for (const auto& j : s["jobs"])
    t += "\n  " + str(j["job"]) + ": " + str(j["status"]) + " (" + str(j["class"]) + "), steps " + str(j["first_step"]) + ".." +
         str(j["last_step"]) + ", " + str(j["nodes"]) + " nodes";
  const Json& g = s["tgs"];
  t += "\n  TGS " + str(s["a"]) + " " + str(g["a"]) + " ± " + str(g["a_std"]) + " | " + str(s["b"]) + " " + str(g["b"]) + " ± " +
       str(g["b_std"]) + " | delta " + str(g["delta_pct"]) + " % (t " + str(g["t"]) + ", " +
       (g["significant"].get<bool>() ? "significant" : "not significant") + ")";
  if (!s["config_diff"].empty()) {
    t += "\n  config differences:";
    for (const auto& d : s["config_diff"]) t += "\n    " + str(d["kind"]) + " " + str(d["key"]) + ": " + str(d["a"]) + " | " + str(d["b"]);
  }
  if (s["trace"].is_object()) {
    const Json& tr = s["trace"];
    t += "\n  profiler traces: " + str(tr["summary"]);
    for (const auto& c : tr["categories"])
      t += "\n    " + str(c["category"]) + ": " + str(c["a_ms"]) + " ms (" + str(c["a_pct"]) + " %) | " + str(c["b_ms"]) + " ms (" +
           str(c["b_pct"]) + " %)";
    t += "\n    ranks: " + str(tr["a_straggler"]) + " | " + str(tr["b_straggler"]);
  }
  if (!s["metrics"].empty()) {
    t += "\n  metrics (" + str(s["metrics_significant"]) + " significant):";
    for (const auto& m : s["metrics"]) {
      bool few = m["pattern"] == "hosts";
      t += "\n    " + std::string(m["significant"].get<bool>() ? "* " : "  ") + str(m["metric"]) + ": " +
           (few ? "mean over hosts " + str(m["a_mean"]) + " → " + str(m["b_mean"]) + " (a few hosts)"
                : str(m["a"]) + " → " + str(m["b"]) + " (" + str(m["delta_pct"]) + " %, " + str(m["pattern"]) +
                      (m["hosts_consistent"].get<bool>() ? ", every host" : "") + ")");
      if (m.contains("hosts")) {
        t += " hosts:";
        for (const auto& h : m["hosts"]) t += " " + str(h["host"]) + "=" + str(h["value"]);
      }
    }
  }
  for (const auto& d : s["log_diff"]) t += "\n  log: " + str(d["item"]) + " " + str(d["a"]) + " vs " + str(d["b"]) + " — " + str(d["note"]);
  for (const auto& n : s["notes"]) t += "\n  note: " + str(n);
  if (s.contains("more"))
    for (const auto& m : s["more"]) t += "\n  also: " + str(m["verdict"]);
  return t;
}

}  // namespace mt::tools
