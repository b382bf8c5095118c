// triage_log's answer as types: the tool's outputSchema and its JSON encoding both come from
// these structs (mcp/typed.h), so they cannot disagree. What each field means is in
// docs/tools/triage_log.md; the From* functions fill a part from what the triage core
// computed (rounding, "null when unknown", the forecasts a status makes meaningful).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mcp/typed.h"
#include "tools/common/tgs_phases.h"
#include "tools/logs/log_scanner.h"
#include "tools/logs/triage_heartbeat.h"
#include "tools/logs/triage_lifecycle.h"
#include "tools/logs/triage_progress.h"
#include "tools/logs/triage_root_cause.h"
#include "tools/logs/workspace.h"

namespace mt::tools {

using mcp::Nullable;

// The exact class names triage_log can return (the outputSchema enum).
const std::vector<std::string>& TriageClasses();

struct TriageJobRef {
  Nullable<std::string> id;
  std::string name;
  std::string kind;
  std::string log;
  Nullable<std::string> dir;
  Nullable<std::string> model;
  Nullable<int64_t> nodes;
  Nullable<std::string> nodelist;
  bool uses_ray = false;
  bool has_tsdb = false;
  template <class F> static void Fields(F& f) {
    f("id", &TriageJobRef::id, {.description = "scheduler job id; null for a log without one"});
    f("name", &TriageJobRef::name);
    f("kind", &TriageJobRef::kind, {.one_of = {"slurm", "local", "k8s", "unknown"}});
    f("log", &TriageJobRef::log, {.description = "the job's main log, relative to the workspace"});
    f("dir", &TriageJobRef::dir);
    f("model", &TriageJobRef::model);
    f("nodes", &TriageJobRef::nodes);
    f("nodelist", &TriageJobRef::nodelist);
    f("uses_ray", &TriageJobRef::uses_ray);
    f("has_tsdb", &TriageJobRef::has_tsdb);
  }
};

struct TriageLineRef {
  int64_t line = 0;
  Nullable<std::string> time;
  std::string text;
  template <class F> static void Fields(F& f) {
    f("line", &TriageLineRef::line);
    f("time", &TriageLineRef::time);
    f("text", &TriageLineRef::text);
  }
};

struct TriageLifecycle {
  std::string stage;
  bool ended = false;
  Nullable<std::string> end_source;
  Nullable<TriageLineRef> end_line;
  Nullable<int64_t> exit_code;
  bool training_finished = false;
  Nullable<TriageLineRef> training_end_line;
  template <class F> static void Fields(F& f) {
    f("stage", &TriageLifecycle::stage, {.one_of = {"launch", "init", "compile", "training", "teardown", "ended"}});
    f("ended", &TriageLifecycle::ended);
    f("end_source", &TriageLifecycle::end_source,
      {.one_of = {"job_summary", "launcher_end_line", "slurm", "srun_task_exit"}});
    f("end_line", &TriageLifecycle::end_line);
    f("exit_code", &TriageLifecycle::exit_code);
    f("training_finished", &TriageLifecycle::training_finished);
    f("training_end_line", &TriageLifecycle::training_end_line);
  }
};

struct TriageClock {
  std::string source;
  Nullable<std::string> last_activity_time;
  Nullable<int64_t> last_activity_line;
  Nullable<std::string> layout;
  bool year_inferred = false;
  Nullable<std::string> note;
  template <class F> static void Fields(F& f) {
    f("source", &TriageClock::source, {.one_of = {"log_timestamp", "file_mtime", "none"}});
    f("last_activity_time", &TriageClock::last_activity_time);
    f("last_activity_line", &TriageClock::last_activity_line);
    f("layout", &TriageClock::layout);
    f("year_inferred", &TriageClock::year_inferred);
    f("note", &TriageClock::note);
  }
};

struct TriageEvidence {
  std::string file;
  int64_t line = 0;
  Nullable<int64_t> rank;
  Nullable<std::string> time;
  std::string signature;
  std::string text;
  template <class F> static void Fields(F& f) {
    f("file", &TriageEvidence::file);
    f("line", &TriageEvidence::line, {.minimum = 1});
    f("rank", &TriageEvidence::rank);
    f("time", &TriageEvidence::time);
    f("signature", &TriageEvidence::signature);
    f("text", &TriageEvidence::text);
  }
};

struct TriageProgress {
  int64_t steps_seen = 0;
  double entries_per_step = 0;
  Nullable<double> steady_step_seconds, recent_step_seconds;
  Nullable<std::string> last_progress_time;
  std::string last_progress_source;
  Nullable<double> seconds_since_progress;
  Nullable<int64_t> expected_step_now;
  double step_seconds_sum = 0;
  Nullable<int64_t> step_seconds_rank;
  Nullable<double> wall_seconds, unaccounted_seconds;
  bool stall_detected = false;
  Nullable<int64_t> total_steps;
  Nullable<double> percent_complete;
  Nullable<int64_t> checkpoint_period;
  bool checkpoint_period_assumed = false;
  Nullable<int64_t> last_checkpoint_step, progress_lost_steps;
  Nullable<double> eta_seconds;
  template <class F> static void Fields(F& f) {
    using P = TriageProgress;
    f("steps_seen", &P::steps_seen);
    f("entries_per_step", &P::entries_per_step);
    f("steady_step_seconds", &P::steady_step_seconds);
    f("recent_step_seconds", &P::recent_step_seconds);
    f("last_progress_time", &P::last_progress_time);
    f("last_progress_source", &P::last_progress_source,
      {.one_of = {"line_timestamp", "log_activity", "file_mtime", "none"}});
    f("seconds_since_progress", &P::seconds_since_progress);
    f("expected_step_now", &P::expected_step_now, {.description = "only while running or hung"});
    f("step_seconds_sum", &P::step_seconds_sum);
    f("step_seconds_rank", &P::step_seconds_rank);
    f("wall_seconds", &P::wall_seconds);
    f("unaccounted_seconds", &P::unaccounted_seconds);
    f("stall_detected", &P::stall_detected);
    f("total_steps", &P::total_steps);
    f("percent_complete", &P::percent_complete);
    f("checkpoint_period", &P::checkpoint_period);
    f("checkpoint_period_assumed", &P::checkpoint_period_assumed);
    f("last_checkpoint_step", &P::last_checkpoint_step);
    f("progress_lost_steps", &P::progress_lost_steps);
    f("eta_seconds", &P::eta_seconds, {.description = "only while running"});
  }
};

struct TriageHang {
  bool stalled = false;
  double threshold_seconds = 0;
  Nullable<double> silent_seconds;
  std::string measured_until;
  std::string rule;
  template <class F> static void Fields(F& f) {
    f("stalled", &TriageHang::stalled);
    f("threshold_seconds", &TriageHang::threshold_seconds);
    f("silent_seconds", &TriageHang::silent_seconds);
    f("measured_until", &TriageHang::measured_until, {.one_of = {"job end", "now"}});
    f("rule", &TriageHang::rule);
  }
};

struct TriageAccusedTask {
  int64_t task = 0;
  Nullable<std::string> host;
  bool logged_own_death = false;
  Nullable<int64_t> own_death_line;
  Nullable<int64_t> last_step;
  Nullable<int64_t> last_step_line;
  bool progress_after_stop = false;
  bool in_lockstep = false;
  template <class F> static void Fields(F& f) {
    using T = TriageAccusedTask;
    f("task", &T::task);
    f("host", &T::host);
    f("logged_own_death", &T::logged_own_death);
    f("own_death_line", &T::own_death_line);
    f("last_step", &T::last_step);
    f("last_step_line", &T::last_step_line);
    f("progress_after_stop", &T::progress_after_stop);
    f("in_lockstep", &T::in_lockstep);
  }
};

struct TriageNeighbour {
  int64_t task = 0;
  Nullable<std::string> host;
  template <class F> static void Fields(F& f) {
    f("task", &TriageNeighbour::task);
    f("host", &TriageNeighbour::host);
  }
};

struct TriageHeartbeat {
  int64_t report_line = 0;
  int64_t reporters = 0;
  Nullable<std::string> crash_time;
  Nullable<int64_t> timeout_seconds;
  std::string timeout_source;
  Nullable<std::string> heartbeat_stop_time;
  std::vector<TriageAccusedTask> accused;
  std::vector<TriageNeighbour> neighbours;
  bool false_positive = false;
  bool hang_before_heartbeat = false;
  std::string reasoning;
  template <class F> static void Fields(F& f) {
    using H = TriageHeartbeat;
    f("report_line", &H::report_line);
    f("reporters", &H::reporters);
    f("crash_time", &H::crash_time);
    f("timeout_seconds", &H::timeout_seconds);
    f("timeout_source", &H::timeout_source, {.one_of = {"log", "argument", "unknown"}});
    f("heartbeat_stop_time", &H::heartbeat_stop_time);
    f("accused", &H::accused);
    f("neighbours", &H::neighbours);
    f("false_positive", &H::false_positive);
    f("hang_before_heartbeat", &H::hang_before_heartbeat);
    f("reasoning", &H::reasoning);
  }
};

struct TriageTgsPhase {
  int64_t start_step = 0, end_step = 0, steps = 0;
  double mean = 0, std = 0, change_pct = 0;
  template <class F> static void Fields(F& f) {
    f("start_step", &TriageTgsPhase::start_step);
    f("end_step", &TriageTgsPhase::end_step);
    f("steps", &TriageTgsPhase::steps);
    f("mean", &TriageTgsPhase::mean);
    f("std", &TriageTgsPhase::std);
    f("change_pct", &TriageTgsPhase::change_pct);
  }
};

struct TriageTgs {
  double steady_mean = 0, tail_mean = 0, degradation_pct = 0;
  bool degraded = false;
  std::string pattern;
  int64_t warmup_steps = 0;
  int64_t spikes = 0;
  Nullable<int64_t> decline_onset_step;
  std::vector<TriageTgsPhase> phases;
  template <class F> static void Fields(F& f) {
    f("steady_mean", &TriageTgs::steady_mean);
    f("tail_mean", &TriageTgs::tail_mean);
    f("degradation_pct", &TriageTgs::degradation_pct);
    f("degraded", &TriageTgs::degraded);
    f("pattern", &TriageTgs::pattern,
      {.one_of = {"stable", "constant_drop", "phased", "gradual", "one_time", "improved", "insufficient_data"}});
    f("warmup_steps", &TriageTgs::warmup_steps);
    f("spikes", &TriageTgs::spikes);
    f("decline_onset_step", &TriageTgs::decline_onset_step);
    f("phases", &TriageTgs::phases);
  }
};

struct TriageInitWave {
  int64_t first_line = 0, last_line = 0, lines = 0;
  Nullable<int64_t> after_step;
  template <class F> static void Fields(F& f) {
    f("first_line", &TriageInitWave::first_line);
    f("last_line", &TriageInitWave::last_line);
    f("lines", &TriageInitWave::lines);
    f("after_step", &TriageInitWave::after_step, {.description = "null: before the first step"});
  }
};

struct TriageInitWaves {
  int64_t count = 0, before_training = 0, during_training = 0;
  bool single_replica_restore = false;
  std::optional<std::vector<TriageInitWave>> waves;
  template <class F> static void Fields(F& f) {
    f("count", &TriageInitWaves::count);
    f("before_training", &TriageInitWaves::before_training);
    f("during_training", &TriageInitWaves::during_training);
    f("single_replica_restore", &TriageInitWaves::single_replica_restore);
    f("waves", &TriageInitWaves::waves, {.description = "each wave, with detail=\"full\""});
  }
};

struct TriageNextStep {
  std::string tool;
  Json arguments = Json::object();
  std::string reason;
  template <class F> static void Fields(F& f) {
    f("tool", &TriageNextStep::tool);
    f("arguments", &TriageNextStep::arguments,
      {.description = "arguments the tool's input schema accepts", .schema = Json{{"type", "object"}}});
    f("reason", &TriageNextStep::reason);
  }
};

struct TriageScanStats {
  int64_t files = 0, bytes = 0, lines = 0, oversized_lines = 0;
  bool changed_during_read = false;
  std::string steps_from;
  template <class F> static void Fields(F& f) {
    f("files", &TriageScanStats::files);
    f("bytes", &TriageScanStats::bytes);
    f("lines", &TriageScanStats::lines);
    f("oversized_lines", &TriageScanStats::oversized_lines);
    f("changed_during_read", &TriageScanStats::changed_during_read);
    f("steps_from", &TriageScanStats::steps_from, {.description = "the file the step series was read from"});
  }
};

struct TriageAnswer {
  TriageJobRef job;
  std::string now;
  std::string root_cause_rule;
  Nullable<std::string> undecided;
  TriageLifecycle lifecycle;
  TriageClock clock;
  std::string cls;
  std::vector<std::string> secondary;
  std::string status;
  bool soft_success = false;
  Nullable<std::string> stage;
  Nullable<std::string> training_phase;
  Nullable<int64_t> exit_code;
  std::string headline;
  std::vector<TriageEvidence> evidence;
  int64_t evidence_total = 0;
  Nullable<int64_t> first_step, last_step, restored_from_step;
  TriageProgress progress;
  TriageHang hang;
  Nullable<TriageHeartbeat> heartbeat;
  Nullable<TriageTgs> tgs;
  Nullable<TriageInitWaves> rccl_init_waves;
  std::map<std::string, int64_t> signature_counts;
  std::vector<TriageNextStep> next_steps;
  Nullable<std::string> remedy;
  TriageScanStats scan;
  bool truncated = false;
  Nullable<std::string> omitted;
  template <class F> static void Fields(F& f) {
    using A = TriageAnswer;
    f("job", &A::job);
    f("now", &A::now);
    f("root_cause_rule", &A::root_cause_rule, {.description = "which rule chose the class over the other candidates"});
    f("undecided", &A::undecided, {.description = "what would decide a status left unknown"});
    f("lifecycle", &A::lifecycle);
    f("clock", &A::clock);
    f("class", &A::cls, {.one_of = TriageClasses()});
    f("secondary", &A::secondary, {.schema = Json{{"items", Json{{"enum", TriageClasses()}}}}});
    f("status", &A::status, {.one_of = {"completed", "failed", "cancelled", "running", "hang", "unknown"}});
    f("soft_success", &A::soft_success);
    f("stage", &A::stage);
    f("training_phase", &A::training_phase, {.one_of = {"init", "compile", "steps"}});
    f("exit_code", &A::exit_code);
    f("headline", &A::headline);
    f("evidence", &A::evidence);
    f("evidence_total", &A::evidence_total, {.minimum = 0});
    f("first_step", &A::first_step);
    f("last_step", &A::last_step);
    f("restored_from_step", &A::restored_from_step);
    f("progress", &A::progress);
    f("hang", &A::hang);
    f("heartbeat", &A::heartbeat);
    f("tgs", &A::tgs);
    f("rccl_init_waves", &A::rccl_init_waves);
    f("signature_counts", &A::signature_counts);
    f("next_steps", &A::next_steps);
    f("remedy", &A::remedy);
    f("scan", &A::scan);
    f("truncated", &A::truncated);
    f("omitted", &A::omitted);
  }
};

// "Unknown" as null: an absent optional integer, an empty text.
template <class T>
Nullable<int64_t> OptInt(const std::optional<T>& v) {
  if (!v) return std::nullopt;
  return static_cast<int64_t>(*v);
}
inline Nullable<std::string> TextOrNull(const std::string& s) {
  if (s.empty()) return std::nullopt;
  return s;
}

// The parts, from what the triage core computed.
TriageEvidence FromEvidence(const Ev& e);
TriageJobRef FromJob(const JobFiles& job, const LogScan& log);
TriageLifecycle FromLifecycle(const Lifecycle& l);
TriageClock FromClock(const LivenessClock& c);
// `status` decides which forecasts are meaningful (expected step now, ETA).
TriageProgress FromProgress(const Progress& p, const std::string& status);
TriageHang FromHang(const Progress& p, bool measured_until_end);
Nullable<TriageHeartbeat> FromHeartbeat(const std::optional<HeartbeatAnalysis>& hb, bool hang_before_heartbeat);
Nullable<TriageTgs> FromTgs(const std::optional<TgsAnalysis>& tgs);
Nullable<TriageInitWaves> FromInitWaves(const LogScan& log, bool full);

}  // namespace mt::tools
