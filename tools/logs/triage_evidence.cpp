#include "tools/logs/triage_evidence.h"

#include <re2/re2.h>

#include <algorithm>
#include <optional>

namespace mt::tools {
namespace {

constexpr size_t kMaxExtraLogs = 64;
constexpr int kStepsAfterNonTerminal = 3;

// Steps whose first line is after `line` in the same file.
int StepsAfter(const LogScan& s, uint64_t line) {
  int n = 0;
  for (auto it = s.steps.rbegin(); it != s.steps.rend() && n < kStepsAfterNonTerminal; ++it)
    if (it->first_line > line) ++n;
  return n;
}

// The end of a traceback whose header was cut off or never printed: "ValueError: …",
// "ModuleNotFoundError: No module …" among the log's last lines, after an optional
// "[rank3]: " prefix; or any exception name ("StopIteration", "SystemError: …") right after
// the traceback's `File "…", line N` frames.
std::optional<LineRef> TailException(const LogScan& s) {
  static const RE2 named(R"(^(?:\[[^\]]{1,40}\]:?\s*)?[A-Za-z_][\w.]*(?:Error|Exception)(?::\s|:?$))");
  static const RE2 after_frames(R"(^(?:\[[^\]]{1,40}\]:?\s*)?[A-Z][\w.]*(?::\s|$))");
  static const RE2 frame(R"(^(?:\[[^\]]{1,40}\]:?\s*)?File "[^"]+", line \d+)");
  for (auto it = s.tail.rbegin(); it != s.tail.rend(); ++it) {
    if (RE2::PartialMatch(it->text, named)) return *it;
    if (RE2::PartialMatch(it->text, after_frames))
      for (auto f = std::next(it); f != s.tail.rend() && f - it <= 4; ++f)
        if (RE2::PartialMatch(f->text, frame)) return *it;
  }
  return std::nullopt;
}

// The shell's report that the job's process got SIGKILL ("Killed", or "bash: line 3: 4242
// Killed  python …") as the log's last line.
std::optional<LineRef> TailSigkill(const LogScan& s) {
  static const RE2 killed(R"(^(?:.*\d+\s+)?Killed(?:\s+.*)?$)");
  if (s.tail.empty()) return std::nullopt;
  const LineRef& last = s.tail.back();
  if (RE2::FullMatch(last.text, killed)) return last;
  return std::nullopt;
}

void FromSignatures(const JobViews& v, CandidateScan* out) {
  for (const FileScanView* f : v.all) {
    for (const auto& [kind, hits] : f->scan().signatures) {
      if (hits.cls.empty() || hits.count == 0) continue;
      Candidate& c = out->cands[hits.cls];
      c.count += hits.count;
      for (const auto& r : hits.first) c.evidence.push_back({f->display, r, kind});
      bool terminal = true;
      if (f == v.steps && !hits.last.empty()) terminal = StepsAfter(f->scan(), hits.last.back().line) < kStepsAfterNonTerminal;
      c.terminal |= terminal;
      if (terminal && !NonFatal(hits.cls)) {
        int64_t t = hits.first.front().time;
        if (t != kNoTime && (out->first_terminal_time == kNoTime || t < out->first_terminal_time)) out->first_terminal_time = t;
      }
    }
  }
  // A traceback's evidence is its last line (the exception), not only its first.
  if (auto it = out->cands.find("python_exception"); it != out->cands.end())
    for (const FileScanView* f : v.all)
      for (const auto& tb : f->scan().tracebacks)
        if (tb.exception.line && it->second.evidence.size() < 12) it->second.evidence.push_back({f->display, tb.exception, "exception"});
  for (auto& [cls, c] : out->cands)
    std::sort(c.evidence.begin(), c.evidence.end(), [](const Ev& a, const Ev& b) {
      return a.file != b.file ? a.file < b.file : a.ref.line < b.ref.line;
    });
}

// mt's own launcher: the JOB SUMMARY's cancellation and the per-node exits.
void FromLauncher(const JobViews& v, CandidateScan* out) {
  const LogScan& ps = v.primary.scan();
  const JobSummary& sum = ps.summary;
  out->summary_cancel = sum.present && sum.status == "FAILED" && sum.exit_code && (*sum.exit_code == 130 || *sum.exit_code == 143);
  if (out->summary_cancel) {
    LineRef r;
    r.line = sum.status_line ? sum.status_line : sum.line;
    r.text = "Status: FAILED (exit " + std::to_string(*sum.exit_code) + ")" + (sum.reason.empty() ? "" : " — " + sum.reason);
    AddCandidate(&out->cands, "cancelled", {v.primary.display, r, "job_summary"});
  }
  out->clean_cancel_exits = !ps.node_exits.empty();
  for (const auto& ne : ps.node_exits) {
    if (ne.exit_code != 143 && ne.exit_code != 130) out->clean_cancel_exits = false;
    if (ne.exit_code != 0 && ne.exit_code != 143 && ne.exit_code != 130)
      AddCandidate(&out->cands, "node_fail", {v.primary.display, ne.ref, "node_exit"});
  }
}

// A traceback whose lines carry another class's evidence (an NCCL error, a deadline, a
// KeyboardInterrupt) is that class's report, not a separate Python failure.
void FoldTracebacks(const JobViews& v, Candidates* cands) {
  auto it = cands->find("python_exception");
  if (it == cands->end()) return;
  size_t explained = 0, total = 0;
  for (const FileScanView* f : v.all)
    for (const auto& tb : f->scan().tracebacks) {
      ++total;
      if (!tb.exception_cls.empty()) {
        ++explained;
        continue;
      }
      const uint64_t lo = tb.start.line, hi = tb.exception.line ? tb.exception.line : tb.start.line + 200;
      bool other = false;
      for (const auto& [cls, c] : *cands) {
        // A launcher's failure report is never part of a traceback (srun interleaves it).
        if (cls == "python_exception" || NonFatal(cls) || ConsequenceTier(cls, c) == 1) continue;
        for (const auto& e : c.evidence)
          if (e.file == f->display && e.ref.line >= lo && e.ref.line <= hi) other = true;
      }
      explained += other;
    }
  if (total == 0 || explained < total) return;
  // Only the tracebacks go; other evidence of the class (srun's failed task, a core dump)
  // stays — except the abort that an explained C++ report before it in the same file
  // announced ("terminate called …" is followed by SIGABRT: the launcher's "Aborted (core
  // dumped)" says how that process died, and its message already said why).
  auto announced_abort = [&](const Ev& e) {
    if (e.signature != "core_dumped" || e.ref.text.find("Aborted") == std::string::npos) return false;
    for (const FileScanView* f : v.all)
      if (f->display == e.file)
        for (const auto& tb : f->scan().tracebacks)
          if (tb.native && tb.start.line < e.ref.line) return true;
    return false;
  };
  auto& ev = it->second.evidence;
  ev.erase(std::remove_if(ev.begin(), ev.end(), [&](const Ev& e) {
             return e.signature == "traceback" || e.signature == "exception" || e.signature == "cpp_terminate" ||
                    announced_abort(e);
           }),
           ev.end());
  if (ev.empty()) cands->erase(it);
}

}  // namespace

void OpenJobViews(const JobFiles& job, ScanCache& cache, JobViews* out) {
  if (job.log.empty())
    throw std::runtime_error("job " + (job.id.empty() ? job.name : job.id) +
                             " has no log yet (the `log` link does not resolve): it may still be queued");
  out->primary = {job.log_display, cache.Get(job.log)};
  auto add = [&](const std::filesystem::path& p) {
    if (out->extras.size() >= kMaxExtraLogs) return;
    const std::string display = job.dir.empty() ? p.string() : job.dir_display + "/" + p.lexically_relative(job.dir).string();
    try {
      out->extras.push_back({display, cache.Get(p)});
    } catch (const std::exception&) {
      // An unreadable side log does not stop triage of the main one.
    }
  };
  if (!job.err_log.empty() && out->extras.size() < kMaxExtraLogs) {
    try {
      out->extras.push_back({job.err_log_display, cache.Get(job.err_log)});
    } catch (const std::exception&) {
      // An unreadable stderr file does not stop triage of the main log.
    }
  }
  for (const auto& p : job.rank_logs) add(p);
  for (const auto& p : job.ray_worker_logs) add(p);
  out->steps = &out->primary;
  for (const auto& e : out->extras)
    if (!e.scan().steps.empty() &&
        (out->steps->scan().steps.empty() || e.scan().steps.back().step > out->steps->scan().steps.back().step))
      out->steps = &e;
  out->all = {&out->primary};
  for (const auto& e : out->extras) out->all.push_back(&e);
}

bool NonFatal(const std::string& cls) {
  return cls == "ray_start_fail" || cls == "dmabuf_guard" || cls == "tgs_degradation";
}

void AddCandidate(Candidates* cands, const std::string& cls, const Ev& ev) {
  Candidate& c = (*cands)[cls];
  ++c.count;
  c.terminal = true;
  c.evidence.push_back(ev);
}

bool FatalPresent(const Candidates& cands) {
  for (const auto& [cls, c] : cands)
    if (c.terminal && !NonFatal(cls) && cls != "cancelled" && cls != "node_fail") return true;
  return false;
}

CandidateScan CollectCandidates(const JobViews& v) {
  CandidateScan out;
  FromSignatures(v, &out);
  FromLauncher(v, &out);
  FoldTracebacks(v, &out.cands);
  // No traceback header (cut off, or a launcher that prints only the exception), or a bare
  // SIGKILL: among the log's last lines, when nothing else ended the job.
  bool terminal_present = false;
  for (const auto& [cls, c] : out.cands) terminal_present |= c.terminal && !NonFatal(cls) && ConsequenceTier(cls, c) == 0;
  const LogScan& ps = v.primary.scan();
  if (!terminal_present && !ps.summary.present) {
    std::optional<LineRef> ex;
    if (ps.tracebacks_total == 0) ex = TailException(ps);   // with a header, the traceback rule above decided
    if (ex) AddCandidate(&out.cands, "python_exception", {v.primary.display, *ex, "tail_exception"});
    else if (auto k = TailSigkill(ps)) AddCandidate(&out.cands, "host_oom", {v.primary.display, *k, "sigkill"});
  }
  return out;
}

}  // namespace mt::tools
