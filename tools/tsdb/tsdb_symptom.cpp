#include "tools/tsdb/tsdb_symptom.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>

#include "tools/common/stats.h"
#include "tools/common/tgs_phases.h"

namespace mt::tools {
namespace {

// A phase this much below the early steady state is a slowdown. Phases closer than 3 %
// are merged by the segmentation already, so anything it keeps apart is real.
constexpr double kSlowPct = 3;
// Utilization at or above this after progress stopped: the GPU spins in a collective.
constexpr double kBusyUtil = 50;

double ScrapeInterval(TsdbContext& tsdb) {
  const double at = std::min(tsdb.data().end, tsdb.data().start + 1200);
  std::vector<double> gaps;
  for (const auto& s : tsdb.Instant("up[1200s]", at)) {
    for (size_t i = 1; i < s.points.size(); ++i) gaps.push_back(s.points[i].t - s.points[i - 1].t);
    if (gaps.size() > 200) break;
  }
  return gaps.empty() ? 30 : std::max(1.0, Median(gaps));
}

std::vector<TgsPhase> PhasesFromTriage(const Json& triage) {
  std::vector<TgsPhase> out;
  if (!triage.is_object() || !triage.contains("tgs") || !triage["tgs"].is_object()) return out;
  for (const auto& p : triage["tgs"].value("phases", Json::array())) {
    if (!p.is_object()) continue;
    TgsPhase ph;
    ph.start_step = p.value("start_step", int64_t{0});
    ph.end_step = p.value("end_step", int64_t{0});
    ph.mean = p.value("mean", 0.0);
    ph.steps = p.value("steps", size_t{0});
    out.push_back(ph);
  }
  return out;
}

// The TSDB's own throughput samples (node 0's exporter): real samples only, by step.
TgsAnalysis PhasesFromTsdb(TsdbContext& tsdb) {
  const std::string d = PromDuration(tsdb.data().seconds() + 60);
  auto vals = tsdb.Instant("tb_perf_per_device_tokens_per_sec[" + d + "]", tsdb.data().end);
  auto fills = tsdb.Instant("tb_metrics_plugin_staleness_fill[" + d + "]", tsdb.data().end);
  auto steps = tsdb.Instant("tb_step[" + d + "]", tsdb.data().end);
  if (vals.empty() || steps.empty()) return {};
  std::map<double, double> step, fill;
  for (const auto& p : steps[0].points) step[p.t] = p.v;
  if (!fills.empty())
    for (const auto& p : fills[0].points) fill[p.t] = p.v;
  std::vector<TgsPoint> pts;
  for (const auto& p : vals[0].points) {
    auto it = step.find(p.t);
    if (it == step.end() || (fill.count(p.t) && fill[p.t] != 0)) continue;
    if (pts.empty() || static_cast<int64_t>(it->second) > pts.back().step) pts.push_back({static_cast<int64_t>(it->second), p.v});
  }
  return AnalyzeTgs(std::move(pts));
}

}  // namespace

Symptom ReadSymptom(TsdbContext& tsdb, const Json& triage) {
  Symptom s;
  tsdb.Progress("attribution: the symptom (throughput phases, progress)");
  s.scrape_s = ScrapeInterval(tsdb);
  auto last_step = tsdb.StepAt(tsdb.data().end);
  if (last_step) {
    s.progress_end = tsdb.TimeOfStep(*last_step);
    s.train_t0 = tsdb.TimeOfStep(LONG_MIN).value_or(tsdb.data().start);
  }

  std::vector<TgsPhase> phases = PhasesFromTriage(triage);
  s.source = phases.empty() ? "" : "log";
  std::optional<int64_t> tsdb_decline_onset;
  if (phases.empty() && last_step) {
    TgsAnalysis a = PhasesFromTsdb(tsdb);
    phases = a.phases;
    s.pattern = a.pattern;
    tsdb_decline_onset = a.decline_onset_step;
    if (!phases.empty()) s.source = "tsdb";
  } else if (triage.is_object() && triage.contains("tgs") && triage["tgs"].is_object()) {
    s.pattern = triage["tgs"].value("pattern", "");
  }
  // A gradual slide starts before the first phase boundary (which waits for a 3 %
  // difference): the segmentation's decline onset starts the first slow segment.
  std::optional<int64_t> decline_onset;
  if (s.source == "log" && triage["tgs"].contains("decline_onset_step") && triage["tgs"]["decline_onset_step"].is_number_integer())
    decline_onset = triage["tgs"]["decline_onset_step"].get<int64_t>();
  if (!phases.empty() && last_step) {
    s.baseline_tgs = phases.front().mean;
    for (size_t i = 1; i < phases.size(); ++i) {
      const double pct = s.baseline_tgs > 0 ? 100 * (phases[i].mean / s.baseline_tgs - 1) : 0;
      if (pct > -kSlowPct) continue;
      SlowSegment g;
      g.step0 = phases[i].start_step;
      g.step1 = phases[i].end_step;
      g.change_pct = Round(pct, 3);
      auto t0 = tsdb.TimeOfStep(static_cast<long>(g.step0));
      if (!t0) continue;
      g.t0 = *t0;
      g.t1 = tsdb.TimeOfStep(static_cast<long>(g.step1 + 1)).value_or(s.progress_end.value_or(tsdb.data().end));
      const auto onset = decline_onset ? decline_onset : tsdb_decline_onset;
      if (s.slow.empty() && i == 1 && onset && *onset < g.step0 && *onset > phases.front().start_step) {
        g.step0 = *onset;
        g.t0 = tsdb.TimeOfStep(static_cast<long>(g.step0)).value_or(g.t0);
      }
      s.phases.push_back(g);
      if (!s.slow.empty() && s.slow.back().step1 + 1 == g.step0) {   // a gradual slide: one segment
        s.slow.back().step1 = g.step1;
        s.slow.back().t1 = g.t1;
        s.slow.back().change_pct = std::min(s.slow.back().change_pct, g.change_pct);
      } else {
        s.slow.push_back(g);
      }
    }
  }

  // Did progress stop while the job's GPUs kept spinning?
  if (s.progress_end && tsdb.data().end - *s.progress_end >= std::max(300.0, 5 * s.scrape_s)) {
    const double a = *s.progress_end + 2 * s.scrape_s, b = std::min(tsdb.data().end, *s.progress_end + 900);
    if (b > a) {
      const HostSignal& util = tsdb.Signals().gpu_util;
      const std::string d = PromDuration(b - a);
      if (util.present()) s.util_after = tsdb.PerHost(FillWindows(util.expr, d, d, d), b);
      int busy = 0;
      for (const auto& [h, v] : s.util_after) busy += v >= kBusyUtil;
      s.busy_share_after = s.util_after.empty() ? 0 : static_cast<double>(busy) / static_cast<double>(s.util_after.size());
      s.stopped = s.busy_share_after >= 0.5;
    }
  }

  if (s.stopped) {
    s.kind = "stop";
    s.why = "progress stopped at " + IsoTime(*s.progress_end) + " (step " + std::to_string(*last_step) + ") while " +
            Num(100 * s.busy_share_after) + " % of the hosts' GPUs stayed busy";
  } else if (!s.slow.empty()) {
    s.kind = "slowdown";
    s.why = "throughput fell " + Num(-s.slow.front().change_pct) + " % below its early steady state (" +
            Num(s.baseline_tgs) + ") at step " + std::to_string(s.slow.front().step0) + " (" + IsoTime(s.slow.front().t0) + ")";
    if (s.slow.size() > 1) s.why += " in " + std::to_string(s.slow.size()) + " separate phases";
  } else if (s.source.empty()) {
    s.kind = "unknown";
    s.why = "no throughput series (neither the log's TGS nor the TSDB's tb_perf scalars) to align hosts with";
  } else {
    s.kind = "none";
    s.why = "throughput stayed at its early steady state (" + Num(s.baseline_tgs) + ")";
    // Progress that ended with the GPUs going idle is the job ending (triage says how), not a stop.
    if (s.progress_end && !s.util_after.empty())
      s.why += "; progress ended at " + IsoTime(*s.progress_end) + " (step " + std::to_string(*last_step) +
               ") with the GPUs going idle: the job ended there, it did not hang";
    else
      s.why += " and progress did not stop";
  }
  return s;
}

bool InHealthy(const Symptom& s, double t, double margin) {
  if (t < s.train_t0 + margin) return false;
  if (s.progress_end && t > *s.progress_end - margin) return false;
  for (const auto& g : s.slow)
    if (t >= g.t0 - margin && t <= g.t1 + margin) return false;
  return true;
}

SymptomAnswer FromSymptom(const Symptom& s) {
  SymptomAnswer out;
  out.kind = s.kind;
  out.source = s.source;
  out.baseline_tgs = Round(s.baseline_tgs);
  for (const auto& g : s.slow) out.slow_phases.push_back(SlowPhase{{g.step0, g.step1}, IsoTime(g.t0), IsoTime(g.t1), g.change_pct});
  out.stopped = s.stopped;
  out.why = s.why;
  if (!s.pattern.empty()) out.pattern = s.pattern;
  if (s.progress_end) out.progress_end = IsoTime(*s.progress_end);
  return out;
}

}  // namespace mt::tools
