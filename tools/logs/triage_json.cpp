#include "tools/logs/triage_json.h"

#include <cmath>

#include "tools/common/iso_time.h"
#include "tools/common/stats.h"

namespace mt::tools {

Json TimeOrNull(int64_t t) { return t == kNoTime ? Json(nullptr) : Json(FormatIso8601(t)); }

Json Round(double v, int digits) { return std::isfinite(v) ? Json(RoundDecimals(v, digits)) : Json(nullptr); }

Json OptRound(const std::optional<double>& v, int digits) { return v ? Round(*v, digits) : Json(nullptr); }

Json EvidenceJson(const Ev& e) {
  return Json{{"file", e.file},
              {"line", e.ref.line},
              {"rank", e.ref.rank >= 0 ? Json(e.ref.rank) : Json(nullptr)},
              {"time", TimeOrNull(e.ref.time)},
              {"signature", e.signature},
              {"text", e.ref.text}};
}

Json JobJson(const JobFiles& job, const LogScan& ps) {
  const JobSummary& sum = ps.summary;
  auto header = [&](const char* k) -> Json {
    auto it = ps.header.find(k);
    return it == ps.header.end() ? Json(nullptr) : Json(it->second);
  };
  Json nodes = nullptr;
  if (auto it = ps.header.find("NNODES"); it != ps.header.end()) {
    try {
      nodes = std::stoi(it->second);
    } catch (const std::exception&) {
    }
  } else if (sum.nodes) {
    nodes = *sum.nodes;
  }
  Json model = header("MODEL_NAME");
  if (model.is_null() && !sum.model.empty()) model = sum.model;
  return Json{{"id", job.id.empty() ? Json(nullptr) : Json(job.id)},
              {"name", !header("JOB_NAME").is_null() ? header("JOB_NAME") : Json(job.name)},
              {"kind", job.kind},
              {"log", job.log_display},
              {"dir", job.dir.empty() ? Json(nullptr) : Json(job.dir_display)},
              {"model", model},
              {"nodes", nodes},
              {"nodelist", !header("JOB_NODELIST").is_null() ? header("JOB_NODELIST") : header("SLURM_JOB_NODELIST")},
              {"uses_ray", ps.uses_ray || ps.header.count("RAY_PORT") > 0},
              {"has_tsdb", job.has_tsdb}};
}

Json ProgressJson(const Progress& p, const std::string& status) {
  const bool live = status == "running" || status == "hang";
  return Json{
      {"steps_seen", p.steps_seen},
      {"entries_per_step", Round(p.entries_per_step, 2)},
      {"steady_step_seconds", OptRound(p.steady_step_seconds)},
      {"recent_step_seconds", OptRound(p.recent_step_seconds)},
      {"last_progress_time", TimeOrNull(p.last_progress_time)},
      {"last_progress_source", p.last_progress_source},
      {"seconds_since_progress", OptRound(p.seconds_since_progress, 0)},
      {"expected_step_now", OptOrNull(live ? p.expected_step_now : std::nullopt)},
      {"step_seconds_sum", Round(p.step_seconds_sum, 1)},
      {"step_seconds_rank", OptOrNull(p.step_seconds_rank)},
      {"wall_seconds", OptRound(p.wall_seconds, 1)},
      {"unaccounted_seconds", OptRound(p.unaccounted_seconds, 1)},
      {"stall_detected", p.stall_detected},
      {"total_steps", OptOrNull(p.total_steps)},
      {"percent_complete", OptRound(p.percent_complete, 1)},
      {"checkpoint_period", OptOrNull(p.checkpoint_period)},
      {"checkpoint_period_assumed", p.checkpoint_period_assumed},
      {"last_checkpoint_step", OptOrNull(p.last_checkpoint_step)},
      {"progress_lost_steps", OptOrNull(p.progress_lost_steps)},
      {"eta_seconds", OptOrNull(status == "running" ? p.eta_seconds : std::nullopt)},
  };
}

Json HangJson(const Progress& p, bool measured_until_end) {
  return Json{{"stalled", p.stalled},
              {"threshold_seconds", Round(p.hang_threshold_seconds, 1)},
              {"silent_seconds", OptRound(p.silent_seconds, 0)},
              {"measured_until", measured_until_end ? "job end" : "now"},
              {"rule", p.hang_rule}};
}

Json HeartbeatJson(const std::optional<HeartbeatAnalysis>& hb, bool hang_before_heartbeat) {
  if (!hb) return nullptr;
  Json accused = Json::array();
  for (const auto& a : hb->accused)
    accused.push_back(Json{{"task", a.task},
                           {"host", a.host.empty() ? Json(nullptr) : Json(a.host)},
                           {"logged_own_death", a.logged_own_death},
                           {"own_death_line", a.own_death_line ? Json(a.own_death_line) : Json(nullptr)},
                           {"last_step", OptOrNull(a.last_step)},
                           {"last_step_line", a.last_step_line ? Json(a.last_step_line) : Json(nullptr)},
                           {"progress_after_stop", a.progress_after_stop},
                           {"in_lockstep", a.in_lockstep}});
  Json neighbours = Json::array();
  for (size_t i = 0; i < hb->neighbours.size(); ++i)
    neighbours.push_back(Json{{"task", hb->neighbours[i]},
                              {"host", i < hb->neighbour_hosts.size() ? Json(hb->neighbour_hosts[i]) : Json(nullptr)}});
  return Json{{"report_line", hb->report.line},
              {"reporters", hb->reporters},
              {"crash_time", TimeOrNull(hb->crash_time)},
              {"timeout_seconds", OptOrNull(hb->timeout_seconds)},
              {"timeout_source", hb->timeout_source},
              {"heartbeat_stop_time", TimeOrNull(hb->heartbeat_stop_time)},
              {"accused", accused},
              {"neighbours", neighbours},
              {"false_positive", hb->false_positive},
              {"hang_before_heartbeat", hang_before_heartbeat},
              {"reasoning", hb->reasoning}};
}

Json TgsJson(const std::optional<TgsAnalysis>& tgs) {
  if (!tgs) return nullptr;
  Json phases = Json::array();
  for (const auto& p : tgs->phases)
    phases.push_back(Json{{"start_step", p.start_step}, {"end_step", p.end_step}, {"steps", p.steps},
                          {"mean", Round(p.mean, 1)}, {"std", Round(p.std, 1)}, {"change_pct", Round(p.change_pct, 1)}});
  return Json{{"steady_mean", Round(tgs->steady_mean, 1)}, {"tail_mean", Round(tgs->tail_mean, 1)},
              {"degradation_pct", Round(tgs->degradation_pct, 1)}, {"degraded", tgs->degraded},
              {"pattern", tgs->pattern}, {"warmup_steps", tgs->warmup_steps},
              {"decline_onset_step", OptOrNull(tgs->decline_onset_step)},
              {"spikes", tgs->spikes.size()}, {"phases", phases}};
}

Json InitWavesJson(const LogScan& ps, bool full) {
  if (ps.init_waves.empty()) return nullptr;
  int before = 0, during = 0;
  Json waves = Json::array();
  for (const auto& w : ps.init_waves) {
    (w.after_step < 0 ? before : during)++;
    waves.push_back(Json{{"first_line", w.first_line}, {"last_line", w.last_line}, {"lines", w.lines},
                         {"after_step", w.after_step >= 0 ? Json(w.after_step) : Json(nullptr)}});
  }
  Json j{{"count", ps.init_waves.size()}, {"before_training", before}, {"during_training", during},
         {"single_replica_restore", ps.single_replica_restore}};
  if (full) j["waves"] = waves;
  return j;
}

}  // namespace mt::tools
