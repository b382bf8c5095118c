#include "tools/compare/compare_jobs.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "tools/compare/compare_config.h"
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
Json LogDiff(const LogScan& a, const LogScan& b, int warmup, const std::string& id_b, int64_t lo, int64_t hi) {
  Json out = Json::array();
  auto add = [&](const std::string& item, Json va, Json vb, const std::string& note) {
    if (va != vb) out.push_back({{"item", item}, {"a", va}, {"b", vb}, {"note", note}});
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

Json MetricJson(const MetricComparison& m) {
  Json j = {{"metric", m.metric},
            {"kind", m.kind},
            {"a", Round(m.a, 5)},
            {"b", Round(m.b, 5)},
            {"a_mean", Round(m.a_mean, 5)},
            {"b_mean", Round(m.b_mean, 5)},
            {"delta", Round(m.delta, 4)},
            {"delta_pct", Round(m.delta_pct, 4)},
            {"hosts_consistent", m.hosts_consistent},
            {"significant", m.significant},
            {"pattern", m.pattern},
            {"score", Round(m.score, 3)},
            {"unit", m.counter ? "per second" : "median"},
            {"hosts_compared", std::to_string(m.hosts_a) + "/" + std::to_string(m.hosts_b)}};
  if (!m.hosts.empty()) {
    j["hosts_in"] = m.hosts_in;
    Json h = Json::array();
    for (const auto& [host, v] : m.hosts) h.push_back({{"host", host}, {"value", Round(v, 4)}});
    j["hosts"] = h;
  }
  return j;
}

std::string Pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f %%", v);
  return b;
}

// A vs one other job.
Json ComparePair(const Workspace& ws, const JobInfo& A, const JobInfo& B, const CompareOptions& opt, TsdbManager* manager,
                 mcp::CallContext* call) {
  const LogScan& a = A.scan->scan;
  const LogScan& b = B.scan->scan;
  const std::string ida = A.job->id.empty() ? A.job->name : A.job->id, idb = B.job->id.empty() ? B.job->name : B.job->id;
  std::vector<std::string> notes;

  TgsComparison tg = CompareTgs(a, b, opt.warmup_steps);
  Json caveats = Json::array();
  for (const JobInfo* j : {&A, &B}) {
    std::string st = j->triage.value("status", "");
    if (Failed(st))
      caveats.push_back("job " + (j->job->id.empty() ? j->job->name : j->job->id) + " is " + st + " (" + j->triage.value("class", "") +
                        "): its throughput covers only the steps it completed before it stopped");
  }
  Json tgs = {{"a", tg.ok ? Json(Round(tg.a, 6)) : Json(nullptr)},
              {"b", tg.ok ? Json(Round(tg.b, 6)) : Json(nullptr)},
              {"delta_pct", tg.ok ? Json(Round(tg.delta_pct, 3)) : Json(nullptr)},
              {"a_std", Round(tg.a_std, 3)},
              {"b_std", Round(tg.b_std, 3)},
              {"steps", tg.first_step >= 0 ? Json({tg.first_step, tg.last_step}) : Json(nullptr)},
              {"n", {tg.a_n, tg.b_n}},
              {"spikes_excluded", {tg.a_spikes, tg.b_spikes}},
              {"t", std::isfinite(tg.t) ? Json(Round(tg.t, 3)) : Json(nullptr)},
              {"significant", tg.significant},
              {"comparable", tg.ok && caveats.empty()}};
  if (!caveats.empty()) tgs["caveats"] = caveats;
  if (!tg.ok) notes.push_back("no overlapping steady steps with Tokens/s/device: TGS not compared");

  std::string na = a.header.count("NNODES") ? a.header.at("NNODES") : "", nb = b.header.count("NNODES") ? b.header.at("NNODES") : "";
  if (!na.empty() && !nb.empty() && na != nb)
    notes.push_back("different node counts (" + na + " vs " + nb + "): TGS is per device, so it compares; per-host metrics compare the hosts each job had");

  // TSDB sweep, or why not.
  Json tsdb = {{"used", false}};
  Json metrics = Json::array();
  size_t significant_total = 0;
  const MetricComparison* top = nullptr;
  ContentionSweepResult sweep;
  if (!A.job->has_tsdb || !B.job->has_tsdb) {
    std::string who = !A.job->has_tsdb && !B.job->has_tsdb ? "neither job has a" : ("job " + (!A.job->has_tsdb ? ida : idb) + " has no");
    tsdb["reason"] = who + " Prometheus TSDB (<job dir>/prometheus with blocks or a wal)";
  } else if (!opt.use_tsdb || manager == nullptr) {
    tsdb["reason"] = "TSDB comparison not requested";
  } else if (!tg.ok) {
    tsdb["reason"] = "no overlapping steady step range to align the TSDBs on";
  } else {
    try {
      ContentionSide xa{A.job, tg.first_step, tg.last_step, MayBeRunning(A.triage)};
      ContentionSide xb{B.job, tg.first_step, tg.last_step, MayBeRunning(B.triage)};
      sweep = ContentionSweep(xa, xb, *manager, call);
      tsdb = {{"used", true}, {"windows", sweep.windows}, {"metrics_compared", sweep.metrics.size()}, {"queries", sweep.queries}};
      for (const auto& n : sweep.notes) notes.push_back(n);
      for (const auto& m : sweep.metrics) {
        if (m.significant) ++significant_total;
        if (metrics.size() < opt.max_metrics && (m.significant || metrics.size() < 3)) metrics.push_back(MetricJson(m));
      }
      if (!sweep.metrics.empty() && sweep.metrics.front().significant) top = &sweep.metrics.front();
      tsdb["significant"] = significant_total;
    } catch (const std::exception& e) {
      tsdb = {{"used", false}, {"reason", std::string("TSDB comparison failed: ") + e.what()}};
    }
  }
  if (!tsdb["used"].get<bool>()) notes.push_back("compared from the logs only: " + tsdb["reason"].get<std::string>());

  auto cfg = DiffConfigs(ws, *A.job, a, *B.job, b);
  Json log_diff = LogDiff(a, b, opt.warmup_steps, idb, tg.ok ? tg.first_step : -1, tg.ok ? tg.last_step : -1);

  // Verdict: the throughput difference, then the strongest evidence.
  std::string v;
  if (tg.ok) {
    v = idb + " vs " + ida + ": steady TGS " + Num(tg.b) + " vs " + Num(tg.a) + " (" + Pct(tg.delta_pct) + ") over steps " +
        std::to_string(tg.first_step) + "–" + std::to_string(tg.last_step);
    v += tg.significant ? "" : ", within noise";
  } else {
    v = idb + " vs " + ida + ": throughput not comparable";
  }
  if (top) {
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
  } else if (tsdb["used"].get<bool>()) {
    v += "; no significant TSDB difference";
  }
  for (const auto& d : log_diff)
    if (d["item"] == "rccl_init_waves") v += "; RCCL init waves " + d["a"].dump() + " vs " + d["b"].dump();
  if (!cfg.empty()) {
    v += "; config differs in ";
    for (size_t i = 0; i < cfg.size() && i < 3; ++i) v += (i ? ", " : "") + cfg[i].key;
    if (cfg.size() > 3) v += " (+" + std::to_string(cfg.size() - 3) + ")";
  }
  if (!caveats.empty()) v += "; caution: " + caveats[0].get<std::string>();

  Json cd = ConfigDiffJson(cfg);
  Json out = {{"a", ida},          {"b", idb},         {"tgs", tgs},     {"config_diff", cd},
              {"metrics", metrics}, {"metrics_significant", significant_total},
              {"log_diff", log_diff}, {"tsdb", tsdb},  {"verdict", v},   {"notes", notes}};
  const Json diagnosis = PairDiagnosis(sweep, tsdb["used"].get<bool>());
  for (auto it = diagnosis.begin(); it != diagnosis.end(); ++it) out[it.key()] = *it;
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

Json CompareJobs(const Workspace& ws, const std::vector<JobFiles>& jobs, const CompareOptions& opt, TsdbManager* manager,
                 mcp::CallContext* call) {
  if (jobs.size() < 2) throw std::invalid_argument("compare needs at least two jobs");
  if (jobs.size() > 8) throw std::invalid_argument("compare takes at most 8 jobs");
  if (opt.warmup_steps < 0 || opt.warmup_steps > 100000) throw std::invalid_argument("warmup_steps must be between 0 and 100000");
  std::vector<JobInfo> info;
  Json triaged = Json::array();
  for (const auto& j : jobs) {
    JobInfo ji{&j, Json(), nullptr};
    Json targs = Json::object();
    std::string now = !opt.now.empty() ? opt.now : DefaultJudgeTime(j);
    if (!now.empty()) targs["now"] = now;
    ji.triage = TriageLogStructured(j, targs);   // triage every job first
    ji.scan = ScanCache::Shared().Get(LogOf(j)).data;
    triaged.push_back({{"job", j.id.empty() ? j.name : j.id}, {"status", ji.triage.value("status", "")},
                       {"class", ji.triage.value("class", "")}, {"first_step", ji.triage.value("first_step", Json(nullptr))},
                       {"last_step", ji.triage.value("last_step", Json(nullptr))}, {"nodes", ji.triage["job"].value("nodes", Json(nullptr))}});
    info.push_back(std::move(ji));
  }
  for (size_t i = 0; i < info.size(); ++i)
    for (size_t k = i + 1; k < info.size(); ++k)
      if (info[i].job->log == info[k].job->log && !info[i].job->log.empty())
        throw std::invalid_argument("job " + jobs[i].id + " is given twice");

  Json out = ComparePair(ws, info[0], info[1], opt, manager, call);
  out["jobs"] = triaged;
  if (info.size() > 2) {
    Json more = Json::array();
    for (size_t i = 2; i < info.size(); ++i) {
      Json p = ComparePair(ws, info[0], info[i], opt, manager, call);
      Json slim = {{"b", p["b"]}, {"tgs", {{"a", p["tgs"]["a"]}, {"b", p["tgs"]["b"]}, {"delta_pct", p["tgs"]["delta_pct"]}, {"significant", p["tgs"]["significant"]}}},
                   {"config_diff", p["config_diff"]}, {"metrics", Json::array()}, {"log_diff", p["log_diff"]}, {"verdict", p["verdict"]}};
      for (size_t k = 0; k < p["metrics"].size() && k < 3; ++k) slim["metrics"].push_back(p["metrics"][k]);
      more.push_back(slim);
    }
    out["more"] = more;
  }
  out["truncated"] = false;
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
