#include "tools/supervise/watch_rules.h"

#include "tools/logs/log_signatures.h"

#include <re2/re2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mt::tools {
namespace {

std::optional<int64_t> IntAt(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer()) return std::nullopt;
  return j[key].get<int64_t>();
}

std::string Str(const Json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// The scheduler says the job succeeded (whatever the log shows so far).
bool Succeeded(const std::string& backend_state) {
  for (const char* s : {"COMPLETED", "Succeeded", "finished"})
    if (backend_state.rfind(s, 0) == 0) return true;
  return false;
}

bool Terminal(const std::string& backend_state) {
  for (const char* s : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL",
                        "DEADLINE", "exited", "finished", "Succeeded", "Failed"})
    if (backend_state.rfind(s, 0) == 0) return true;
  return false;
}

std::string Seconds(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f s", s);
  return b;
}

// The hosts a host-local failure (a GPU error, a lost node) names in its evidence: Slurm's
// "Node failure on HOST", a kernel log line's host ("Feb 24 19:06:00 HOST kernel: NVRM: Xid"),
// or the host NCCL/RCCL put in front of the failing process's line ("HOST:pid:tid [0] …").
// For these classes the reporting process sits on the failing host. Collective failures and
// hangs name no culprit here: the rank that reports a timeout is one that waited, not the one
// that failed (TSDB attribution decides those).
// Attribution's confidence is 0.5 where its score just clears the bar (tsdb_attribution.h).
constexpr double kTsdbCulpritConfidence = 0.5;

std::vector<std::string> CulpritsOf(const Json& t, const std::string& cls) {
  static const RE2 node_failure(R"(Node failure on ([A-Za-z0-9][A-Za-z0-9._-]*))");
  static const RE2 kernel_log(R"(^[A-Z][a-z]{2} +\d+ [\d:]+ ([A-Za-z0-9][A-Za-z0-9._-]*) kernel:)");
  static const RE2 nccl_prefix(R"(^(?:\d+: )?([A-Za-z][A-Za-z0-9._-]*):\d+:\d+ \[\d+\])");
  std::vector<std::string> hosts;
  auto add = [&hosts](const std::string& h) {
    if (!h.empty() && std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.push_back(h);
  };
  // The metrics' word (query_tsdb playbook auto, asked by the watch): a host that stopped
  // reporting or whose GPUs logged fatal errors while the job failed or hung. Independent of
  // the log, so it may blame a host behind a hang or a collective error, which the ranks'
  // own reports never can (they name who waited, not who died).
  if (t.contains("tsdb_attribution") && t["tsdb_attribution"].is_object() && Str(t["tsdb_attribution"], "family") == "node_death" &&
      t["tsdb_attribution"].contains("culprits") && t["tsdb_attribution"]["culprits"].is_array())
    for (const Json& c : t["tsdb_attribution"]["culprits"])
      if (c.is_object() && c.value("confidence", 0.0) >= kTsdbCulpritConfidence) add(Str(c, "host"));
  if (cls != "gpu_hw_error" && cls != "node_fail") return hosts;
  if (!t.contains("evidence") || !t["evidence"].is_array()) return hosts;
  // Only the evidence of the class itself: the first line of each secondary class is in the
  // list too, and a rank that merely waited must not be blamed.
  auto proves_class = [&cls](const std::string& signature) {
    for (const LineSignature& sig : LineSignatures())
      if (sig.kind == signature && sig.cls == cls) return true;
    return false;
  };
  for (const Json& e : t["evidence"]) {
    if (!proves_class(Str(e, "signature"))) continue;
    const std::string text = Str(e, "text");
    std::string host;
    if (RE2::PartialMatch(text, node_failure, &host) || RE2::PartialMatch(text, kernel_log, &host) ||
        RE2::PartialMatch(text, nccl_prefix, &host))
      add(host);
  }
  return hosts;
}

AttemptDiagnosis DiagnosisOf(const std::string& job, const Json& t, const std::string& status, const std::string& cls) {
  AttemptDiagnosis d;
  d.job = job;
  d.status = status;
  d.cls = cls;
  d.last_step = IntAt(t, "last_step");
  if (t.contains("progress")) d.checkpoint_step = IntAt(t["progress"], "last_checkpoint_step");
  d.culprits = CulpritsOf(t, cls);
  return d;
}

void MakeDecision(WatchMemory& m, WatchTick& tick, const AttemptDiagnosis& d, const WatchConfig& c, bool only_if_new = false) {
  Decision dec = mt::tools::Decide(d, m.earlier, m.restarts, c.policy);
  m.last_diagnosis = d;
  if (only_if_new && m.decided && dec.action == m.decision_action) return;
  m.decided = true;
  m.decision_action = dec.action;
  Json detail = {{"action", dec.action}, {"reason", dec.reason}, {"exclude", dec.exclude}, {"culprits", d.culprits},
                 {"class", d.cls}, {"job", d.job}};
  if (dec.resume_step) detail["resume_step"] = *dec.resume_step;
  tick.findings.push_back({"decision", dec.action + ": " + dec.reason, detail});
  tick.decision = dec;
}

Json DiagnosisJson(const AttemptDiagnosis& d) {
  auto opt = [](const std::optional<int64_t>& v) { return v ? Json(*v) : Json(nullptr); };
  return {{"job", d.job}, {"status", d.status}, {"class", d.cls}, {"last_step", opt(d.last_step)},
          {"checkpoint_step", opt(d.checkpoint_step)}, {"culprits", d.culprits}};
}

AttemptDiagnosis DiagnosisFromJson(const Json& j) {
  AttemptDiagnosis d;
  d.job = Str(j, "job");
  d.status = Str(j, "status");
  d.cls = Str(j, "class");
  d.last_step = IntAt(j, "last_step");
  d.checkpoint_step = IntAt(j, "checkpoint_step");
  if (j.contains("culprits") && j["culprits"].is_array())
    for (const Json& h : j["culprits"])
      if (h.is_string()) d.culprits.push_back(h.get<std::string>());
  return d;
}

}  // namespace

void WatchMemory::StartAttempt(const std::string& next) {
  if (last_diagnosis) earlier.push_back(*last_diagnosis);
  WatchMemory fresh;
  fresh.restarts = restarts + 1;
  fresh.job = next;
  fresh.earlier = std::move(earlier);
  *this = std::move(fresh);
}

Json WatchMemory::ToJson() const {
  Json j = {{"backend_state", backend_state}, {"phase", phase},         {"degraded", degraded}, {"decided", decided},
            {"decision_action", decision_action}, {"end_decided", phase_decided_end}, {"restarts", restarts}};
  j["hang_step"] = hang_step ? Json(*hang_step) : Json(nullptr);
  j["job"] = job;
  j["restart_plan"] = restart_plan;
  j["restart_state"] = restart_state;
  j["last_diagnosis"] = last_diagnosis ? DiagnosisJson(*last_diagnosis) : Json(nullptr);
  j["earlier"] = Json::array();
  for (const AttemptDiagnosis& d : earlier) j["earlier"].push_back(DiagnosisJson(d));
  return j;
}

WatchMemory WatchMemory::FromJson(const Json& j) {
  WatchMemory m;
  if (!j.is_object()) return m;
  m.backend_state = Str(j, "backend_state");
  m.phase = Str(j, "phase");
  m.hang_step = IntAt(j, "hang_step");
  m.degraded = j.value("degraded", false);
  m.decided = j.value("decided", false);
  m.decision_action = Str(j, "decision_action");
  m.phase_decided_end = j.value("end_decided", false);
  m.restarts = j.value("restarts", 0);
  m.job = Str(j, "job");
  m.restart_plan = Str(j, "restart_plan");
  m.restart_state = Str(j, "restart_state");
  if (j.contains("last_diagnosis") && j["last_diagnosis"].is_object()) m.last_diagnosis = DiagnosisFromJson(j["last_diagnosis"]);
  if (j.contains("earlier") && j["earlier"].is_array())
    for (const Json& d : j["earlier"])
      if (d.is_object()) m.earlier.push_back(DiagnosisFromJson(d));
  return m;
}

WatchTick Observe(WatchMemory& m, const std::string& job, const std::string& backend_state, const Json& t, const WatchConfig& c) {
  WatchTick tick;
  const std::string status = Str(t, "status"), cls = Str(t, "class");
  const std::optional<int64_t> step = IntAt(t, "last_step");
  if (backend_state != m.backend_state && !backend_state.empty()) {
    tick.findings.push_back({"state", "scheduler state " + (m.backend_state.empty() ? std::string("") : m.backend_state + " -> ") + backend_state,
                             {{"from", m.backend_state}, {"to", backend_state}}});
  }
  if (!backend_state.empty()) m.backend_state = backend_state;

  const bool ended = status == "completed" || status == "failed" || status == "cancelled" || Terminal(backend_state);
  if (ended) {
    if (m.phase != "ended") {
      m.phase = "ended";
      tick.findings.push_back({"ended", "job ended: " + status + " (" + cls + ")" + (step ? ", last step " + std::to_string(*step) : ""),
                               {{"status", status}, {"class", cls}, {"last_step", step ? Json(*step) : Json(nullptr)}}});
    }
    // A job that ended while a hang decision stood has been decided already; one the
    // scheduler calls a success needs no decision.
    const bool success = status == "completed" || (Succeeded(backend_state) && status != "failed" && status != "cancelled");
    if (!success && m.phase_decided_end == false) {
      MakeDecision(m, tick, DiagnosisOf(job, t, status == "running" || status == "hang" ? "failed" : status, cls), c, true);
      m.phase_decided_end = true;
    }
    tick.finished = true;
    return tick;
  }

  // Running: a hang by the watch's threshold (or triage's own when none was set).
  const Json& hang = t.contains("hang") ? t["hang"] : Json::object();
  const double silent = hang.contains("silent_seconds") && hang["silent_seconds"].is_number() ? hang["silent_seconds"].get<double>() : 0;
  const bool started = step.has_value();
  const double startup = c.startup_seconds > 0 ? c.startup_seconds : std::max(600.0, 10 * c.hang_seconds);
  const double threshold = c.hang_seconds > 0 ? (started ? c.hang_seconds : startup) : hang.value("threshold_seconds", 0.0);
  const bool hung = threshold > 0 && silent > threshold && (c.hang_seconds > 0 || status == "hang");
  const int64_t at = step.value_or(-1);   // -1: hung before the first step
  if (hung && m.hang_step != at) {
    m.phase = "hang";
    m.hang_step = at;
    m.decided = false;
    tick.findings.push_back({"hang", "no completed step for " + Seconds(silent) + " (threshold " + Seconds(threshold) + ")" +
                                         (step ? ", last step " + std::to_string(*step) : ""),
                             {{"silent_seconds", silent}, {"threshold_seconds", threshold}, {"last_step", step ? Json(*step) : Json(nullptr)}}});
    MakeDecision(m, tick, DiagnosisOf(job, t, "hang", "hang"), c);
  } else if (!hung && m.phase != "running") {
    if (m.phase == "hang") {
      tick.findings.push_back({"state", "progress again after the hang", {{"last_step", step ? Json(*step) : Json(nullptr)}}});
      m.decided = false;   // the hang's decision is spent: a later failure gets its own
    }
    m.phase = "running";
  }

  // Degradation: triage's TGS phases, the last against the first.
  const Json& tgs = t.contains("tgs") ? t["tgs"] : Json::object();
  if (!m.degraded && tgs.contains("phases") && tgs["phases"].is_array() && tgs["phases"].size() >= 2) {
    const Json& first = tgs["phases"].front();
    const Json& last = tgs["phases"].back();
    double a = first.value("mean", 0.0), b = last.value("mean", 0.0);
    int64_t n = last.value("steps", int64_t{0});
    double drop = a > 0 ? 100 * (a - b) / a : 0;
    if (drop >= c.degrade_pct && n >= c.degrade_steps) {
      m.degraded = true;
      char buf[160];
      std::snprintf(buf, sizeof buf, "TGS %.0f -> %.0f (-%.1f %%) for %lld steps since step %lld", a, b, drop,
                    static_cast<long long>(n), static_cast<long long>(last.value("start_step", int64_t{0})));
      tick.findings.push_back({"degraded", buf, {{"from", a}, {"to", b}, {"drop_pct", drop}, {"steps", n}}});
    }
  }
  return tick;
}

}  // namespace mt::tools
