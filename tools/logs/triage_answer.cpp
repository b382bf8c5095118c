#include "tools/logs/triage_answer.h"

#include <cmath>

#include "base/iso_time.h"
#include "tools/common/stats.h"

namespace mt::tools {
namespace {

Nullable<std::string> TimeOrNull(int64_t t) {
  if (t == kNoTime) return std::nullopt;
  return base::FormatIso8601(t);
}

// Rounded for reading; a value that is not finite has no meaning and encodes as null.
double Round(double v, int digits = 3) { return std::isfinite(v) ? RoundDecimals(v, digits) : v; }

Nullable<double> OptRound(const std::optional<double>& v, int digits = 3) {
  if (!v || !std::isfinite(*v)) return std::nullopt;
  return RoundDecimals(*v, digits);
}

Nullable<int64_t> LineOrNull(uint64_t line) {
  if (line == 0) return std::nullopt;
  return static_cast<int64_t>(line);
}

Nullable<TriageLineRef> FromLineRef(const std::optional<LineRef>& r) {
  if (!r) return std::nullopt;
  return TriageLineRef{static_cast<int64_t>(r->line), TimeOrNull(r->time), r->text};
}

}  // namespace

TriageEvidence FromEvidence(const Ev& e) {
  TriageEvidence out;
  out.file = e.file;
  out.line = static_cast<int64_t>(e.ref.line);
  if (e.ref.rank >= 0) out.rank = e.ref.rank;
  out.time = TimeOrNull(e.ref.time);
  out.signature = e.signature;
  out.text = e.ref.text;
  return out;
}

TriageJobRef FromJob(const JobFiles& job, const LogScan& ps) {
  auto header = [&](const char* k) -> Nullable<std::string> {
    auto it = ps.header.find(k);
    if (it == ps.header.end()) return std::nullopt;
    return it->second;
  };
  TriageJobRef out;
  out.id = TextOrNull(job.id);
  out.name = header("JOB_NAME").value_or(job.name);
  out.kind = job.kind;
  out.log = job.log_display;
  if (!job.dir.empty()) out.dir = job.dir_display;
  out.model = header("MODEL_NAME");
  if (!out.model && !ps.summary.model.empty()) out.model = ps.summary.model;
  if (auto it = ps.header.find("NNODES"); it != ps.header.end()) {
    try {
      out.nodes = std::stoi(it->second);
    } catch (const std::exception&) {
    }
  } else if (ps.summary.nodes) {
    out.nodes = *ps.summary.nodes;
  }
  out.nodelist = header("JOB_NODELIST");
  if (!out.nodelist) out.nodelist = header("SLURM_JOB_NODELIST");
  out.uses_ray = ps.uses_ray || ps.header.count("RAY_PORT") > 0;
  out.has_tsdb = job.has_tsdb;
  return out;
}

TriageLifecycle FromLifecycle(const Lifecycle& l) {
  TriageLifecycle out;
  out.stage = l.stage;
  out.ended = l.ended;
  out.end_source = TextOrNull(l.end_source);
  out.end_line = FromLineRef(l.end_line);
  out.exit_code = OptInt(l.exit_code);
  out.training_finished = l.training_finished;
  out.training_end_line = FromLineRef(l.training_end_line);
  return out;
}

TriageClock FromClock(const LivenessClock& c) {
  TriageClock out;
  out.source = c.source;
  out.last_activity_time = TimeOrNull(c.last_activity);
  out.last_activity_line = LineOrNull(c.last_activity_line);
  out.layout = TextOrNull(c.layout);
  out.year_inferred = c.year_inferred;
  out.note = TextOrNull(c.note);
  return out;
}

TriageProgress FromProgress(const Progress& p, const std::string& status) {
  const bool live = status == "running" || status == "hang";
  TriageProgress out;
  out.steps_seen = static_cast<int64_t>(p.steps_seen);
  out.entries_per_step = Round(p.entries_per_step, 2);
  out.steady_step_seconds = OptRound(p.steady_step_seconds);
  out.recent_step_seconds = OptRound(p.recent_step_seconds);
  out.last_progress_time = TimeOrNull(p.last_progress_time);
  out.last_progress_source = p.last_progress_source;
  out.seconds_since_progress = OptRound(p.seconds_since_progress, 0);
  if (live) out.expected_step_now = OptInt(p.expected_step_now);
  out.step_seconds_sum = Round(p.step_seconds_sum, 1);
  out.step_seconds_rank = OptInt(p.step_seconds_rank);
  out.wall_seconds = OptRound(p.wall_seconds, 1);
  out.unaccounted_seconds = OptRound(p.unaccounted_seconds, 1);
  out.stall_detected = p.stall_detected;
  out.total_steps = OptInt(p.total_steps);
  out.percent_complete = OptRound(p.percent_complete, 1);
  out.checkpoint_period = OptInt(p.checkpoint_period);
  out.checkpoint_period_assumed = p.checkpoint_period_assumed;
  out.last_checkpoint_step = OptInt(p.last_checkpoint_step);
  out.progress_lost_steps = OptInt(p.progress_lost_steps);
  if (status == "running" && p.eta_seconds) out.eta_seconds = *p.eta_seconds;
  return out;
}

TriageHang FromHang(const Progress& p, bool measured_until_end) {
  TriageHang out;
  out.stalled = p.stalled;
  out.threshold_seconds = Round(p.hang_threshold_seconds, 1);
  out.silent_seconds = OptRound(p.silent_seconds, 0);
  out.measured_until = measured_until_end ? "job end" : "now";
  out.rule = p.hang_rule;
  return out;
}

Nullable<TriageHeartbeat> FromHeartbeat(const std::optional<HeartbeatAnalysis>& hb, bool hang_before_heartbeat) {
  if (!hb) return std::nullopt;
  TriageHeartbeat out;
  for (const auto& a : hb->accused)
    out.accused.push_back(TriageAccusedTask{a.task, TextOrNull(a.host), a.logged_own_death,
                                            LineOrNull(a.own_death_line), OptInt(a.last_step),
                                            LineOrNull(a.last_step_line), a.progress_after_stop, a.in_lockstep});
  for (size_t i = 0; i < hb->neighbours.size(); ++i) {
    TriageNeighbour n{hb->neighbours[i], std::nullopt};
    if (i < hb->neighbour_hosts.size()) n.host = hb->neighbour_hosts[i];
    out.neighbours.push_back(std::move(n));
  }
  out.report_line = static_cast<int64_t>(hb->report.line);
  out.reporters = hb->reporters;
  out.crash_time = TimeOrNull(hb->crash_time);
  out.timeout_seconds = OptInt(hb->timeout_seconds);
  out.timeout_source = hb->timeout_source;
  out.heartbeat_stop_time = TimeOrNull(hb->heartbeat_stop_time);
  out.false_positive = hb->false_positive;
  out.hang_before_heartbeat = hang_before_heartbeat;
  out.reasoning = hb->reasoning;
  return out;
}

Nullable<TriageTgs> FromTgs(const std::optional<TgsAnalysis>& tgs) {
  if (!tgs) return std::nullopt;
  TriageTgs out;
  for (const auto& p : tgs->phases)
    out.phases.push_back(TriageTgsPhase{p.start_step, p.end_step, static_cast<int64_t>(p.steps), Round(p.mean, 1),
                                        Round(p.std, 1), Round(p.change_pct, 1)});
  out.steady_mean = Round(tgs->steady_mean, 1);
  out.tail_mean = Round(tgs->tail_mean, 1);
  out.degradation_pct = Round(tgs->degradation_pct, 1);
  out.degraded = tgs->degraded;
  out.pattern = tgs->pattern;
  out.warmup_steps = static_cast<int64_t>(tgs->warmup_steps);
  out.decline_onset_step = OptInt(tgs->decline_onset_step);
  out.spikes = static_cast<int64_t>(tgs->spikes.size());
  return out;
}

Nullable<TriageInitWaves> FromInitWaves(const LogScan& ps, bool full) {
  if (ps.init_waves.empty()) return std::nullopt;
  TriageInitWaves out;
  std::vector<TriageInitWave> waves;
  for (const auto& w : ps.init_waves) {
    ++(w.after_step < 0 ? out.before_training : out.during_training);
    TriageInitWave wave{static_cast<int64_t>(w.first_line), static_cast<int64_t>(w.last_line),
                        static_cast<int64_t>(w.lines), std::nullopt};
    if (w.after_step >= 0) wave.after_step = w.after_step;
    waves.push_back(std::move(wave));
  }
  out.count = static_cast<int64_t>(ps.init_waves.size());
  out.single_replica_restore = ps.single_replica_restore;
  if (full) out.waves = std::move(waves);
  return out;
}

}  // namespace mt::tools
