#include "tools/perf/goodput.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace mt::tools {
namespace {

struct TimedStep {
  int64_t step = 0;
  double seconds = 0;        // its duration
  int64_t end = kNoTime;     // when its line was printed
};

// Each stamped step with its duration: the log's own step time when it prints one, else the
// time since the previous step (the first step's is unknown until the median fills it).
// A log without step times: stamps are whole seconds, so several steps share one; the
// attempt's average spacing is each step's duration.
std::vector<TimedStep> TimedSteps(const LogScan& s) {
  std::vector<TimedStep> out;
  bool any_seconds = false;
  for (const auto& r : s.steps) {
    const int64_t end = r.last_time != kNoTime ? r.last_time : r.first_time;
    if (end == kNoTime) continue;
    out.push_back({r.step, r.seconds > 0 ? r.seconds : -1, end});
    any_seconds |= r.seconds > 0;
  }
  if (!any_seconds && out.size() >= 2 && out.back().step > out.front().step) {
    const double spacing = static_cast<double>(out.back().end - out.front().end) /
                           static_cast<double>(out.back().step - out.front().step);
    for (auto& t : out) t.seconds = spacing;
  }
  return out;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The steps a later attempt did again: everything after the checkpoint it resumed from (all
// of them when it started over).
std::optional<int64_t> KeptThrough(const std::vector<ChainAttempt>& chain, size_t i) {
  if (i + 1 >= chain.size()) return std::nullopt;                 // the last attempt keeps all
  return chain[i + 1].resume_step.value_or(-1);
}

// An attempt's first moment: its first stamped line, or its first step's.
int64_t StartOf(const LogScan& scan, const TimedStep& first) {
  return scan.first_time != kNoTime ? std::min(scan.first_time, first.end) : first.end;
}

struct Split {
  double productive = 0, startup = 0, checkpoint = 0, redone = 0, failure = 0;
};

// One attempt's own time, measured from its log.
Split SplitAttempt(const ChainAttempt& a, const std::vector<TimedStep>& steps, double median, bool last,
                   std::optional<int64_t> kept_through, GoodputAttemptView* view) {
  Split s;
  if (steps.empty()) return s;
  const std::set<int64_t> saves(a.scan->checkpoint_steps.begin(), a.scan->checkpoint_steps.end());
  const TimedStep& first = steps.front();
  const double first_seconds = first.seconds > 0 ? first.seconds : median;
  const int64_t start = StartOf(*a.scan, first);
  s.startup = std::max(0.0, static_cast<double>(first.end - start) - first_seconds) + std::max(0.0, first_seconds - median);
  for (size_t k = 0; k < steps.size(); ++k) {
    const TimedStep& t = steps[k];
    const double d = k == 0 ? median : (t.seconds > 0 ? t.seconds : median);
    if (kept_through && t.step > *kept_through) {
      s.redone += d;
      ++view->redone_steps;
      continue;
    }
    const bool near_save = saves.count(t.step) || saves.count(t.step - 1);
    const double excess = std::max(0.0, d - median);
    if (near_save && k > 0) s.checkpoint += excess;
    s.productive += near_save && k > 0 ? d - excess : d;
  }
  // The end of a failed attempt: silence from its last step to its last line.
  const bool failed = !last || (a.status == "failed" || a.status == "cancelled");
  const int64_t end = std::max(a.scan->tail_time, a.scan->last_time);
  if (failed && end != kNoTime && end > steps.back().end) s.failure = static_cast<double>(end - steps.back().end);
  return s;
}

// Seconds of [a0, a1] within [b0, b1].
double Overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return static_cast<double>(std::max<int64_t>(0, std::min(a1, b1) - std::max(a0, b0)));
}

}  // namespace

GoodputView ComputeGoodput(const std::vector<ChainAttempt>& chain) {
  GoodputView g;
  std::vector<std::vector<TimedStep>> steps(chain.size());
  std::vector<double> durations;
  for (size_t i = 0; i < chain.size(); ++i) {
    if (!chain[i].scan) continue;
    steps[i] = TimedSteps(*chain[i].scan);
    for (size_t k = 1; k < steps[i].size(); ++k)
      if (steps[i][k].seconds > 0) durations.push_back(steps[i][k].seconds);
  }
  const double median = Median(durations);
  int64_t first_start = kNoTime, last_end = kNoTime, prev_end = kNoTime;
  for (size_t i = 0; i < chain.size(); ++i) {
    const ChainAttempt& a = chain[i];
    GoodputAttemptView v;
    v.job = a.job;
    v.attempt = a.attempt;
    v.cls = a.cls;
    v.status = a.status;
    v.resumed_from = a.resume_step;
    if (!a.approved_via.empty()) v.approved_via = a.approved_via;
    v.kept_through = KeptThrough(chain, i);
    if (a.requested > 0 && a.decided >= a.requested) v.approval_wait_seconds = static_cast<double>(a.decided - a.requested);
    if (!steps[i].empty()) {
      v.first_step = steps[i].front().step;
      v.last_step = steps[i].back().step;
      const Split s = SplitAttempt(a, steps[i], median, i + 1 == chain.size(), v.kept_through, &v);
      const int64_t start = StartOf(*a.scan, steps[i].front());
      const int64_t end = std::max({a.scan->tail_time, a.scan->last_time, steps[i].back().end});
      // A restart waiting for a human while this attempt still hangs: that wait is the
      // approval's, not the failure's.
      double waiting_while_failed = 0;
      if (i + 1 < chain.size() && chain[i + 1].requested > 0 && chain[i + 1].decided >= chain[i + 1].requested)
        waiting_while_failed = std::min(s.failure, Overlap(chain[i + 1].requested, chain[i + 1].decided, end - static_cast<int64_t>(s.failure), end));
      g.productive_seconds += s.productive;
      g.startup_seconds += s.startup;
      g.checkpoint_seconds += s.checkpoint;
      g.redone_seconds += s.redone;
      g.failure_seconds += s.failure - waiting_while_failed;
      g.approval_seconds += waiting_while_failed;
      g.redone_steps += v.redone_steps;
      if (first_start == kNoTime) first_start = start;
      if (prev_end != kNoTime && start > prev_end) {
        const double gap = static_cast<double>(start - prev_end);
        const double wait = a.requested > 0 && a.decided >= a.requested ? std::min(gap, Overlap(a.requested, a.decided, prev_end, start)) : 0;
        g.approval_seconds += wait;
        g.restart_seconds += gap - wait;
      }
      prev_end = last_end = end;
    } else if (a.scan) {
      g.notes.push_back("job " + a.job + ": no time-stamped step in its log");
    } else {
      g.notes.push_back("job " + a.job + ": no log yet");
    }
    if (i + 1 < chain.size()) ++g.interruptions;   // it was restarted
    else if (a.status == "failed") ++g.interruptions;
    g.attempts.push_back(std::move(v));
  }
  if (first_start == kNoTime || last_end <= first_start) {
    g.notes.push_back("no attempt has time-stamped steps: goodput needs the logs' own clocks");
    return g;
  }
  g.total_seconds = static_cast<double>(last_end - first_start);
  const double accounted = g.productive_seconds + g.startup_seconds + g.checkpoint_seconds + g.redone_seconds +
                           g.failure_seconds + g.approval_seconds + g.restart_seconds;
  g.other_seconds = std::max(0.0, g.total_seconds - accounted);
  if (accounted > g.total_seconds * 1.05 + 2)
    g.notes.push_back("the parts add up to more than the wall time (step times are the logs' own; stamps are whole seconds)");
  g.goodput_pct = g.total_seconds > 0 ? 100.0 * std::min(g.productive_seconds, g.total_seconds) / g.total_seconds : 0;
  return g;
}

}  // namespace mt::tools
