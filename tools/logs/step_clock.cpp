#include "tools/logs/step_clock.h"

#include <algorithm>

namespace mt::tools {
namespace {

// Each step's completion relative to the first one's, by the durations the step lines
// state. A missing or absurd duration (≤ 0) counts as the median of the others.
std::vector<double> RelativeCompletion(const std::vector<StepRecord>& steps) {
  std::vector<double> d;
  for (const auto& s : steps)
    if (s.seconds > 0) d.push_back(s.seconds);
  double median = 0;
  if (!d.empty()) {
    std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
    median = d[d.size() / 2];
  }
  std::vector<double> rel(steps.size(), 0);
  for (size_t i = 1; i < steps.size(); ++i) rel[i] = rel[i - 1] + (steps[i].seconds > 0 ? steps[i].seconds : median);
  return rel;
}

// Seconds the log says ran before training: the stages that ended before the first step.
double StagesBeforeTraining(const LogScan& scan) {
  const uint64_t first_step_line = scan.steps.empty() ? 0 : scan.steps.front().first_line;
  double total = 0;
  for (const auto& e : scan.stages)
    if (e.event == "END" && e.line < first_step_line && e.elapsed_seconds && e.stage != "Training") total += *e.elapsed_seconds;
  return total;
}

}  // namespace

StepClock StepClockFromLog(const LogScan& scan, std::optional<double> start_anchor, std::optional<double> end_anchor,
                           const std::string& anchor_label) {
  StepClock clock;
  const auto& steps = scan.steps;
  if (steps.empty()) return clock;
  const std::vector<double> rel = RelativeCompletion(steps);
  std::vector<size_t> stamped;
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].first_time != kNoTime) stamped.push_back(i);

  std::vector<double> t(steps.size(), 0);
  if (!stamped.empty()) {
    // Stamped steps at their stamps; the others by durations from the nearest stamped step
    // before them (after them, for those before the first stamp).
    size_t anchor = stamped.front();
    for (size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].first_time != kNoTime) anchor = i;
      t[i] = static_cast<double>(steps[anchor].first_time) + rel[i] - rel[anchor];
    }
    clock.source = stamped.size() == steps.size() ? "the step lines' own time stamps"
                                                  : "the step lines' time stamps, and their durations between them";
  } else if (start_anchor) {
    const double stages = StagesBeforeTraining(scan);
    const double first = *start_anchor + stages + std::max(0.0, steps.front().seconds);
    for (size_t i = 0; i < steps.size(); ++i) t[i] = first + rel[i];
    clock.source = "the step durations from the job's start (" + anchor_label + ")" +
                   (stages > 0 ? " and the stages the log timed before training" : "") +
                   ": times are late by any startup the log does not time";
  } else if (scan.tail_time != kNoTime && scan.tail_time_line > steps.back().last_line) {
    const double end = static_cast<double>(scan.tail_time);
    for (size_t i = 0; i < steps.size(); ++i) t[i] = end - (rel.back() - rel[i]);
    clock.source = "the step durations, anchored at the log's last time stamp (after the last step)";
  } else if (end_anchor) {
    for (size_t i = 0; i < steps.size(); ++i) t[i] = *end_anchor - (rel.back() - rel[i]);
    clock.source = "the step durations, anchored at the job's end (" + anchor_label +
                   "): times are early by whatever ran after the last step";
  } else {
    return clock;
  }
  for (size_t i = 0; i < steps.size(); ++i) clock.steps.push_back({steps[i].step, t[i]});
  return clock;
}

}  // namespace mt::tools
