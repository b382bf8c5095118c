#include "tools/logs/triage_progress.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

namespace mt::tools {
namespace {

constexpr size_t kWarmupSteps = 5;
constexpr size_t kRecentSteps = 20;
constexpr double kStallSeconds = 900;      // unaccounted time that counts as a stall
constexpr double kMinHangSeconds = 600;    // never call a hang on less silence than this
constexpr double kHangStepFactor = 10;     // … or than 10 steady steps
constexpr double kInitHangSeconds = 1800;  // before the first step (init + XLA compile)
constexpr int64_t kAssumedCheckpointPeriod = 200;

double Median(std::vector<double> v) {
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end());
  double m = v[mid];
  if (v.size() % 2 == 0) m = (m + *std::max_element(v.begin(), v.begin() + static_cast<long>(mid))) / 2;
  return m;
}

std::optional<int64_t> ToInt(const std::optional<std::string>& s) {
  if (!s) return std::nullopt;
  int64_t v;
  auto r = std::from_chars(s->data(), s->data() + s->size(), v);
  if (r.ec != std::errc()) return std::nullopt;
  return v;
}

bool Truthy(const std::optional<std::string>& s) {
  if (!s) return false;
  std::string v = *s;
  std::transform(v.begin(), v.end(), v.begin(), ::tolower);
  return v == "true" || v == "1" || v == "yes";
}

}  // namespace

std::optional<std::string> JobSetting(const LogScan& scan, const std::string& key) {
  std::optional<std::string> found;
  auto it = scan.header.find("PASSTHROUGH_ARGS");
  if (it != scan.header.end()) {
    const std::string& args = it->second;
    size_t p = 0;
    while (p < args.size()) {
      while (p < args.size() && args[p] == ' ') ++p;
      size_t e = args.find(' ', p);
      std::string tok = args.substr(p, e == std::string::npos ? std::string::npos : e - p);
      if (tok.size() > 1 && (tok.front() == '"' || tok.front() == '\'')) tok = tok.substr(1);
      if (!tok.empty() && (tok.back() == '"' || tok.back() == '\'')) tok.pop_back();
      if (tok.starts_with(key + "=")) found = tok.substr(key.size() + 1);
      if (e == std::string::npos) break;
      p = e + 1;
    }
  }
  if (found) return found;
  auto c = scan.config.find(key);
  if (c != scan.config.end()) return c->second;
  return std::nullopt;
}

std::optional<int64_t> JobSettingInt(const LogScan& scan, const std::string& key) {
  return ToInt(JobSetting(scan, key));
}

Progress ComputeProgress(const LogScan& scan, const LivenessClock& clock, int64_t now, int64_t end_time) {
  Progress p;
  const auto& steps = scan.steps;
  p.steps_seen = steps.size();
  p.total_steps = JobSettingInt(scan, "steps");
  if (!p.total_steps && scan.step_total > 0) p.total_steps = scan.step_total;   // "iteration 100/ 5000"
  if (!steps.empty()) {
    p.first_step = steps.front().step;
    p.last_step = steps.back().step;
    if (*p.first_step > 0) p.restored_from_step = *p.first_step - 1;
    p.entries_per_step = static_cast<double>(scan.step_lines) / static_cast<double>(steps.size());
    std::vector<double> secs;
    for (size_t i = kWarmupSteps; i < steps.size(); ++i)
      if (steps[i].seconds > 0) secs.push_back(steps[i].seconds);
    if (secs.empty())   // short runs: whatever there is
      for (const auto& s : steps)
        if (s.seconds > 0) secs.push_back(s.seconds);
    if (!secs.empty()) {
      p.steady_step_seconds = Median(secs);
      std::vector<double> recent(secs.end() - static_cast<long>(std::min(kRecentSteps, secs.size())), secs.end());
      p.recent_step_seconds = Median(recent);
    }
  }
  if (scan.restored_step && !p.restored_from_step) p.restored_from_step = scan.restored_step;

  // Sum of one rank's step seconds.
  for (const auto& [rank, r] : scan.ranks) {
    if (r.step_lines == 0) continue;
    p.step_seconds_sum = r.seconds_sum;
    if (rank >= 0) p.step_seconds_rank = rank;
    break;
  }
  // Time of the last progress: time-stamped step lines, else the last activity on the
  // log's clock, else (no stamps at all) the file's mtime when it is usable.
  if (!steps.empty() && steps.back().last_time != kNoTime) {
    p.last_progress_time = steps.back().last_time;
    p.last_progress_source = "line_timestamp";
  } else if (clock.last_activity != kNoTime) {
    p.last_progress_time = clock.last_activity;
    p.last_progress_source = clock.source == "file_mtime" ? "file_mtime" : "log_activity";
  } else {
    p.last_progress_source = "none";
  }
  // Wall time covered by the steps, when the step lines carry time stamps.
  if (steps.size() >= 2 && steps.front().first_time != kNoTime && steps.back().last_time != kNoTime) {
    double wall = static_cast<double>(steps.back().last_time - steps.front().first_time) +
                  std::max(0.0, steps.front().seconds);
    p.wall_seconds = wall;
    p.unaccounted_seconds = wall - p.step_seconds_sum;
    p.stall_detected = *p.unaccounted_seconds > kStallSeconds;
  }
  // Checkpoints.
  bool ckpt_on = Truthy(JobSetting(scan, "enable_checkpointing")) || !scan.checkpoint_steps.empty();
  if (auto period = JobSettingInt(scan, "checkpoint_period"); period && *period > 0) {
    p.checkpoint_period = period;
  } else if (ckpt_on) {
    p.checkpoint_period = kAssumedCheckpointPeriod;
    p.checkpoint_period_assumed = true;
  }
  if (p.last_step) {
    for (auto it = scan.checkpoint_steps.rbegin(); it != scan.checkpoint_steps.rend(); ++it)
      if (*it <= *p.last_step) {
        p.last_checkpoint_step = *it;
        break;
      }
    if (!p.last_checkpoint_step && ckpt_on && p.checkpoint_period)
      p.last_checkpoint_step = *p.last_step / *p.checkpoint_period * *p.checkpoint_period;
    if (p.last_checkpoint_step) p.progress_lost_steps = *p.last_step - *p.last_checkpoint_step;
  }
  // Hang rule.
  double step_time = p.recent_step_seconds.value_or(0);
  p.hang_threshold_seconds = steps.empty() ? kInitHangSeconds : std::max(kMinHangSeconds, kHangStepFactor * step_time);
  int64_t until = end_time != kNoTime ? end_time : now;
  if (p.last_progress_time != kNoTime) {
    p.silent_seconds = static_cast<double>(until - p.last_progress_time);
    p.seconds_since_progress = static_cast<double>(now - p.last_progress_time);
    p.stalled = *p.silent_seconds > p.hang_threshold_seconds;
  }
  char rule[256];
  std::snprintf(rule, sizeof rule,
                steps.empty() ? "no completed step and no log activity for more than %.0f s (init + XLA compile allowance)"
                              : "no completed step for more than %.0f s (max of 600 s and 10 x the recent step time)",
                p.hang_threshold_seconds);
  p.hang_rule = rule;
  // Projection (only meaningful while the job may still run).
  if (p.last_step && step_time > 0) {
    if (end_time == kNoTime && p.seconds_since_progress && *p.seconds_since_progress > 0)
      p.expected_step_now = *p.last_step + static_cast<int64_t>(*p.seconds_since_progress / step_time);
    if (p.total_steps && *p.total_steps > 0) {
      int64_t remaining = std::max<int64_t>(0, *p.total_steps - 1 - *p.last_step);
      p.eta_seconds = static_cast<double>(remaining) * step_time;
      p.percent_complete = std::min(100.0, static_cast<double>(*p.last_step + 1) / static_cast<double>(*p.total_steps) * 100);
    }
  }
  return p;
}

}  // namespace mt::tools
