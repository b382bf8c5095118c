#include "tools/logs/triage_lifecycle.h"

#include <re2/re2.h>

#include <algorithm>


namespace mt::tools {
namespace {

constexpr int64_t kMtimeSlack = 60;   // an mtime this far after `now` is still "now"

// A progress counter (tqdm, Levanter's "Progress on:train 200it/200it", "iter 200/200")
// at its total in the log's last counter line: the loop ran to the end. Per-epoch counters
// reach their total at every epoch's end, so lines naming an epoch or a validation or
// sanity pass do not count; "Epoch 3/3" alone is the start of the last epoch.
std::optional<LineRef> CounterAtTotal(const LogScan& s) {
  static const RE2 counter(R"((?:^|[^\d/.])(\d+)(?:it)?/(\d+)(?:it)?(?:[^\d/.]|$))");
  static const RE2 rate(R"(it/s|s/it|%\||rate[:=]|\d+it\b)");
  static const RE2 per_epoch(R"((?i)epoch|validat|sanity|eval|test)");
  for (auto it = s.tail.rbegin(); it != s.tail.rend(); ++it) {
    int64_t done = 0, total = 0;
    if (!RE2::PartialMatch(it->text, rate)) continue;
    if (!RE2::PartialMatch(it->text, counter, &done, &total)) continue;
    if (RE2::PartialMatch(it->text, per_epoch)) return std::nullopt;
    if (total >= 2 && done == total) return *it;
    return std::nullopt;
  }
  return std::nullopt;
}

// A batch script's last words are often its exit status in no fixed wording: "rc=1",
// "exit code: 137", "Exit status 0", "python exited with return code 1". Only a line among
// the last three that ends with the number counts, so a message quoting a code mid-run
// does not end the job.
std::optional<JobEnd> TailExitLine(const LogScan& s) {
  static const RE2 exit_line(
      R"((?i)(?:^|[\s:(\[])(?:exit[ _]?code|exit[ _]status|return[ _]code|returncode|rc)\s*[=:]?\s*\(?(-?\d{1,3})\)?\s*$)");
  int seen = 0;
  for (auto it = s.tail.rbegin(); it != s.tail.rend() && seen < 3; ++it, ++seen) {
    int code = 0;
    if (RE2::PartialMatch(it->text, exit_line, &code)) return JobEnd{*it, code};
  }
  return std::nullopt;
}

// Launcher end lines too short for the scanner's prefilter, read where they are: among the
// log's last lines ("Job end: … (exit code 1)", XPK's "XPK End: …" then "EXIT_CODE=0").
std::vector<JobEnd> TailEndLines(const LogScan& s) {
  static const RE2 end_line(R"((?i)(?:^|[^\w])(?:job end|xpk end)\b|\bEXIT_CODE=-?\d)");
  static const RE2 code_re(R"((?i)(?:exit[ _]?code|exit status|return code|\brc)\s*[=:]?\s*\(?\s*(-?\d+))");
  std::vector<JobEnd> out;
  for (const auto& r : s.tail) {
    if (!RE2::PartialMatch(r.text, end_line)) continue;
    JobEnd e{r, std::nullopt};
    int code = 0;
    if (RE2::PartialMatch(r.text, code_re, &code)) e.exit_code = code;
    out.push_back(e);
  }
  return out;
}

// Every end line, in log order: the scanner's (long literals), the tail's short ones, and
// failing both a bare exit status as one of the last lines.
std::vector<JobEnd> EndLines(const LogScan& s) {
  std::vector<JobEnd> ends = s.job_ends;
  for (const auto& e : TailEndLines(s)) {
    bool dup = false;
    for (const auto& j : ends) dup |= j.ref.line == e.ref.line;
    if (!dup) ends.push_back(e);
  }
  std::sort(ends.begin(), ends.end(), [](const JobEnd& a, const JobEnd& b) { return a.ref.line < b.ref.line; });
  if (ends.empty())
    if (auto t = TailExitLine(s)) ends.push_back(*t);
  return ends;
}

}  // namespace

LivenessClock ChooseClock(const LogScan& s, int64_t mtime, int64_t now) {
  LivenessClock c;
  c.layout = s.clock_layout;
  c.year_inferred = s.clock_year_inferred;
  int64_t t = s.tail_time;
  uint64_t line = s.tail_time_line;
  if (s.last_time != kNoTime && (t == kNoTime || s.last_time > t)) {
    t = s.last_time;
    line = s.last_line_with_time;
  }
  for (const auto& st : s.steps)   // sorted by step: the last one is usually the latest
    if (st.last_time != kNoTime && (t == kNoTime || st.last_time > t)) {
      t = st.last_time;
      line = st.last_line;
    }
  if (t != kNoTime) {
    c.source = "log_timestamp";
    c.last_activity = t;
    c.last_activity_line = line;
    if (t > now + 86400)
      c.note = "the log's last time stamp is after `now`: check `now` and the log's time zone";
    else if (s.clock_year_inferred && !s.clock_anchored)
      c.note = "stamps carry no year; the year was inferred from the file's mtime";
    return c;
  }
  if (mtime != kNoTime && mtime <= now + kMtimeSlack) {
    c.source = "file_mtime";
    c.last_activity = mtime;
    c.note = "the log has no time stamps: the file's mtime is the time of its last write";
    return c;
  }
  c.source = "none";
  c.note = mtime == kNoTime ? "the log has no time stamps and the file's mtime is unknown"
                            : "the log has no time stamps and the file's mtime is after `now` (a copied log)";
  return c;
}

Lifecycle ReadLifecycle(const LogScan& s, bool finished_all) {
  Lifecycle l;
  if (s.training_end) {
    l.training_finished = true;
    l.training_end_line = s.training_end;
  }
  if (!l.training_finished)
    if (auto c = CounterAtTotal(s)) {
      l.training_finished = true;
      l.training_end_line = c;
    }
  l.training_finished |= finished_all;
  // The end, most authoritative first.
  if (s.summary.present) {
    l.ended = true;
    l.end_source = "job_summary";
    LineRef r;
    r.line = s.summary.status_line ? s.summary.status_line : s.summary.line;
    r.text = "Status: " + s.summary.status;
    l.end_line = r;
    l.exit_code = s.summary.exit_code;
  } else if (auto ends = EndLines(s); !ends.empty()) {
    const JobEnd& e = ends.back();
    l.ended = true;
    l.end_source = "launcher_end_line";
    l.end_line = e.ref;
    l.exit_code = e.exit_code;
    for (const auto& j : ends)   // "XPK End" then "EXIT_CODE=0": the code may be on another line
      if (j.exit_code) l.exit_code = j.exit_code;
  } else if (!s.slurm_ends.empty()) {
    l.ended = true;
    l.end_source = "slurm";
    l.end_line = s.slurm_ends.front().ref;
  } else {
    for (const auto& [task, code] : s.task_exit_codes)
      if (code != 0) {
        l.ended = true;
        l.end_source = "srun_task_exit";
        if (!l.exit_code) l.exit_code = code;
      }
  }
  if (l.end_line) l.end_time = l.end_line->time;
  if (l.ended) l.stage = "ended";
  else if (l.training_finished) l.stage = "teardown";
  else if (!s.steps.empty()) l.stage = "training";
  else if (s.memstats) l.stage = "compile";
  else if (s.lines > s.header.size() + 8) l.stage = "init";
  else l.stage = "launch";
  return l;
}

}  // namespace mt::tools
