#include "tools/logs/log_scanner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <set>
#include <unordered_map>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include <re2/re2.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "base/workspace_files.h"
#include "tools/common/iso_time.h"
#include "tools/logs/literal_set.h"
#include "tools/logs/log_clock.h"
#include "tools/logs/progress_formats.h"
#include "tools/logs/log_signatures.h"

namespace mt::tools {
namespace {

constexpr int kHeaderLines = 120;          // the KEY=value header lives in the first lines
constexpr int kTracebackBudget = 200;      // lines to look for a traceback's last line
constexpr int kTracebackLookahead = 8;     // lines past a doubtful end to look for a better one
constexpr size_t kMaxRanks = 1 << 16;
constexpr size_t kMaxListed = 64;          // node exits, stage events, Slurm ends, waves …
constexpr size_t kKeepTracebacks = 8;      // first and last

// Every literal of the table, ids = table indices.
const LiteralSet& Literals() {
  static const LiteralSet set = [] {
    std::vector<std::string> lits;
    for (const auto& s : LineSignatures()) lits.emplace_back(s.literal);
    return LiteralSet(std::move(lits));
  }();
  return set;
}

// The prefilter skips up to (shortest literal − 2) bytes per probe: a 3-byte literal makes it
// several times slower. Literals shorter than this serve only progress formats that a log
// may turn out not to use.
constexpr size_t kFastLiteral = 11;

// The table without its short literals, ids unchanged: a dropped literal is replaced by a
// string of control bytes no text log holds (a duplicate of a real literal would cost a
// second verification at every hit of it).
const LiteralSet& FastLiterals() {
  static const LiteralSet set = [] {
    std::vector<std::string> lits;
    for (const auto& s : LineSignatures())
      lits.emplace_back(s.literal.size() >= kFastLiteral ? std::string(s.literal)
                                                         : "\x01\x02\x03\x04 unused " + std::to_string(lits.size()));
    return LiteralSet(std::move(lits));
  }();
  return set;
}

// Which prefilter a scan needs: all literals until the log's progress format is known, then
// only the long ones unless that format is found through a short one.
const LiteralSet& ScanLiterals(const std::string& step_format) {
  if (step_format.empty()) return Literals();
  for (const auto& f : ProgressFormats())
    if (f.name == step_format && f.literal.size() < kFastLiteral) return Literals();
  return FastLiterals();
}

// The stamp the line splitter already read (ISO or absl prefix), as a log-clock stamp.
std::optional<Stamp> SplitterStamp(const LogLine& ll) {
  if (!ll.has_time) return std::nullopt;
  Stamp s;
  s.year = ll.year, s.month = ll.month, s.day = ll.day;
  s.hour = ll.hour, s.minute = ll.minute, s.second = ll.second;
  s.utc_offset = ll.utc_offset;
  s.layout = ll.year ? "iso" : "absl";
  return s;
}

bool Contains(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

// Number after `key` (skipping blanks), e.g. NumberAfter("seconds: 5.6", "seconds:").
bool NumberAfter(std::string_view s, std::string_view key, size_t from, double* out,
                 size_t* end = nullptr) {
  size_t p = s.find(key, from);
  if (p == std::string_view::npos) return false;
  p += key.size();
  while (p < s.size() && s[p] == ' ') ++p;
  const char* b = s.data() + p;
  const char* e = s.data() + s.size();
  if (e - b >= 3 && (std::memcmp(b, "nan", 3) == 0 || std::memcmp(b, "NaN", 3) == 0)) {
    *out = std::nan("");
    if (end) *end = p + 3;
    return true;
  }
  auto r = std::from_chars(b, e, *out);
  if (r.ec != std::errc()) return false;
  if (end) *end = static_cast<size_t>(r.ptr - s.data());
  return true;
}

bool IntAfter(std::string_view s, std::string_view key, int64_t* out, size_t from = 0) {
  size_t p = s.find(key, from);
  if (p == std::string_view::npos) return false;
  p += key.size();
  while (p < s.size() && (s[p] == ' ' || s[p] == '=' || s[p] == ':')) ++p;
  auto r = std::from_chars(s.data() + p, s.data() + s.size(), *out);
  return r.ec == std::errc();
}

struct StepLine {
  int64_t step = 0;
  double seconds = -1, tflops = -1, mfu = -1, tgs = -1, loss = -1;
};

// Reads "<key> <number>" at exactly `pos` (the usual layout of a step line); false when
// the text there is something else.
bool FieldAt(std::string_view c, size_t* pos, std::string_view key, double* out) {
  if (c.compare(*pos, key.size(), key) != 0) return false;
  size_t p = *pos + key.size();
  while (p < c.size() && c[p] == ' ') ++p;
  auto r = std::from_chars(c.data() + p, c.data() + c.size(), *out);
  if (r.ec != std::errc()) return false;
  p = static_cast<size_t>(r.ptr - c.data());
  if (p < c.size() && c[p] == '%') ++p;
  *pos = p;
  return true;
}

bool ParseStepLine(std::string_view c, StepLine* out) {
  size_t at = c.find("completed step:");
  if (at == std::string_view::npos) return false;
  size_t p = at + 15;
  while (p < c.size() && c[p] == ' ') ++p;
  auto r = std::from_chars(c.data() + p, c.data() + c.size(), out->step);
  if (r.ec != std::errc() || out->step < 0) return false;
  size_t from = static_cast<size_t>(r.ptr - c.data());
  // Fast path: MaxText's fixed field order.
  size_t q = from;
  if (FieldAt(c, &q, ", seconds:", &out->seconds) && FieldAt(c, &q, ", TFLOP/s/device:", &out->tflops)) {
    FieldAt(c, &q, ", MFU:", &out->mfu);
    if (FieldAt(c, &q, ", Tokens/s/device:", &out->tgs)) {
      size_t l = c.find("loss:", q);
      if (l != std::string_view::npos) NumberAfter(c, "loss:", l, &out->loss);
      return true;
    }
  }
  size_t end = from;
  if (NumberAfter(c, "seconds:", from, &out->seconds, &end)) from = end;
  if (NumberAfter(c, "TFLOP/s/device:", from, &out->tflops, &end)) from = end;
  if (NumberAfter(c, "MFU:", from, &out->mfu, &end)) from = end;
  if (NumberAfter(c, "Tokens/s/device:", from, &out->tgs, &end)) from = end;
  NumberAfter(c, "loss:", from, &out->loss);
  return true;
}

bool IsUpperKey(std::string_view k) {
  if (k.empty() || k.size() > 40) return false;
  for (char c : k)
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return k[0] >= 'A' && k[0] <= 'Z';
}

std::string_view StripQuotes(std::string_view v) {
  if (v.size() >= 2 && ((v.front() == '"' && v.back() == '"') || (v.front() == '\'' && v.back() == '\'')))
    return v.substr(1, v.size() - 2);
  return v;
}

// "35h 2m 3s", "2m 3s", "45s" (also "1h 0m 0s").
std::optional<int64_t> ParseWall(std::string_view w) {
  int64_t total = 0;
  bool any = false;
  size_t p = 0;
  while (p < w.size()) {
    while (p < w.size() && w[p] == ' ') ++p;
    int64_t v;
    auto r = std::from_chars(w.data() + p, w.data() + w.size(), v);
    if (r.ec != std::errc()) break;
    p = static_cast<size_t>(r.ptr - w.data());
    if (p >= w.size()) break;
    char u = w[p++];
    if (u == 'h') total += v * 3600;
    else if (u == 'm') total += v * 60;
    else if (u == 's') total += v;
    else return std::nullopt;
    any = true;
  }
  if (!any) return std::nullopt;
  return total;
}

bool KilledLine(std::string_view c) {
  std::string_view t = Trim(c);
  if (t == "Killed") return true;
  // bash job status: "[script: line 12: ]12345 Killed   python3 train.py"
  size_t k = t.find(" Killed");
  if (k == std::string_view::npos || k == 0) return false;
  size_t d = k;
  while (d > 0 && t[d - 1] >= '0' && t[d - 1] <= '9') --d;
  return d < k && (d == 0 || t[d - 1] == ' ');
}

bool MentionsOom(std::string_view c) {
  return Contains(c, "out of memory") || Contains(c, "OUT_OF_MEMORY") ||
         Contains(c, "OutOfMemory") || Contains(c, "OUT_OF_RESOURCES");
}

bool Refined(Refine r, std::string_view c) {
  switch (r) {
    case Refine::kNone: return true;
    case Refine::kKilledLine: return KilledLine(c);
    case Refine::kNotCuInit: return !Contains(c, "cuInit") && !MentionsOom(c);
    case Refine::kNotOom: return !MentionsOom(c);
    case Refine::kRocdeviceAbort: return Contains(c, "Aborting") && !MentionsOom(c);
    case Refine::kXlaFlag: return Contains(c, "--xla") || Contains(c, "XLA_FLAGS");
    case Refine::kNonZeroSubprocess: {
      int64_t code;
      return IntAfter(c, "exited with code", &code) && code != 0;
    }
    case Refine::kNcclFatal: return !Contains(c, "NCCL_SOCKET_IFNAME");
    case Refine::kDeadline:
      return Contains(c, "DEADLINE_EXCEEDED") || Contains(c, "Deadline") || Contains(c, "deadline") ||
             Contains(c, "timed out") || Contains(c, "Timed out");
    case Refine::kTaskLaunch: return Contains(c, "Task launch");
    case Refine::kNotPeerLost: return !Contains(c, "by peer");
    case Refine::kNotHostMemory: return !Contains(c, "ray.exceptions.OutOfMemoryError") && !Contains(c, "low on memory");
    case Refine::kNotASetting: {
      static const RE2 setting(R"((?i)heartbeat[ _]timeout(?:[ _]\w+)?\s*[=:]\s*["']?\d)");
      return !RE2::PartialMatch(c, setting);
    }
  }
  return true;
}

void TaskIds(std::string_view c, std::vector<int>* out) {
  size_t p = 0;
  while ((p = c.find("/job:jax_worker/replica:", p)) != std::string_view::npos) {
    size_t t = c.find("/task:", p);
    p += 24;
    if (t == std::string_view::npos) break;
    int64_t id;
    auto r = std::from_chars(c.data() + t + 6, c.data() + c.size(), id);
    if (r.ec == std::errc() && id >= 0 && id < 1000000 &&
        std::find(out->begin(), out->end(), static_cast<int>(id)) == out->end())
      out->push_back(static_cast<int>(id));
  }
}

#if defined(__x86_64__)
__attribute__((target("avx2,popcnt"))) uint64_t CountNewlinesAvx2(const char* p, size_t n) {
  uint64_t c = 0;
  size_t i = 0;
  const __m256i nl = _mm256_set1_epi8('\n');
  for (; i + 64 <= n; i += 64) {
    __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 32));
    uint64_t ma = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, nl)));
    uint64_t mb = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, nl)));
    c += static_cast<uint64_t>(_mm_popcnt_u64(ma | (mb << 32)));
  }
  for (; i < n; ++i) c += p[i] == '\n';
  return c;
}
#endif

uint64_t CountNewlinesPortable(const char* p, size_t n) {
  uint64_t c = 0;
  const char* end = p + n;
  while (p < end) {
    const void* q = std::memchr(p, '\n', static_cast<size_t>(end - p));
    if (!q) break;
    ++c;
    p = static_cast<const char*>(q) + 1;
  }
  return c;
}

}  // namespace

uint64_t CountNewlines(const char* data, size_t n) {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
  if (avx2) return CountNewlinesAvx2(data, n);
#endif
  return CountNewlinesPortable(data, n);
}

const StepRecord* LogScan::FindStep(int64_t step) const {
  auto it = std::lower_bound(steps.begin(), steps.end(), step,
                             [](const StepRecord& r, int64_t s) { return r.step < s; });
  return it != steps.end() && it->step == step ? &*it : nullptr;
}

struct LogScanner::Impl {
  explicit Impl(int64_t ref) : reference(ref), clock(ref) {}

  int64_t reference;
  LogClock clock;                // the log's own clock (log_clock.h)
  LogScan scan;
  std::unordered_map<int64_t, uint32_t> step_index;
  uint64_t offset = 0;
  uint64_t line_no = 0;          // lines completed before the current position
  int full_lines = kHeaderLines; // lines examined whole, literal or not
  bool header = true;            // false for a continuation (it starts mid-file)
  int summary_lines = 0;
  bool in_stage_table = false;
  bool in_long_line = false;
  struct PendingTraceback {
    uint64_t seq;
    int rank;
    int budget;
    bool native;          // C++: the message is the next line of the task, "what(): …"
    uint64_t start_line;
    LineRef start;
    LineRef fallback;     // the first unindented line that did not look like an exception
    std::string fallback_cls;
    int lookahead = 0;
  };
  std::vector<PendingTraceback> pending_tb;
  std::vector<std::pair<uint64_t, TracebackRecord>> tracebacks;  // (seq, record)
  int hb_open = -1;
  int hb_rank = -1;
  uint64_t hb_line = 0;
  std::set<std::pair<int, int>> wave_members;   // (task, device) in the current init wave
  uint64_t step_lines_at_wave = 0;
  int64_t max_step = -1;
  // Per-rank records indexed by rank + 1 (slot 0: lines without a task label); turned
  // into LogScan::ranks by Result().
  std::vector<RankRecord> rank_vec;
  std::vector<uint8_t> rank_seen;
  RankRecord* Rank(int rank) {
    if (rank < -1 || static_cast<size_t>(rank) >= kMaxRanks) return nullptr;
    size_t i = static_cast<size_t>(rank + 1);
    if (i >= rank_vec.size()) {
      rank_vec.resize(i + 1);
      rank_seen.resize(i + 1, 0);
    }
    rank_seen[i] = 1;
    return &rank_vec[i];
  }
  int64_t cached_step = -1;      // the step of the previous step line, and its record
  uint32_t cached_step_index = 0;
  std::vector<int> ids;          // scratch
  std::vector<LiteralSet::Hit> hits;   // scratch
  std::string ansi_free;         // scratch

  size_t Feed(const char* data, size_t n, bool at_eof);
  void LongPiece(const char* data, size_t n);
  void Process(const char* data, size_t n, size_t start, size_t end, int hint);
  bool task_failed = false;           // srun reported a task's non-zero exit
  static constexpr uint64_t kStampProbeLines = 4096;
  uint64_t stamp_hits = 0, stamp_misses = 0;   // FindStamp on lines the splitter found no stamp in
  uint64_t last_record_line = 0;      // the line and class of the latest signature recorded
  std::string last_record_cls;
  void Context(const LogLine& ll, std::string_view content, int64_t t);
  void TracebackEnds(const LogLine& ll, std::string_view content, int64_t t);
  // False when the line is not a step line of the log's progress format.
  bool Step(const LogLine& ll, std::string_view content, int64_t t);
  LineRef Ref(const LogLine& ll, std::string_view content, int64_t t) const;
  void Record(std::string_view kind, std::string_view cls, const LineRef& ref);
  void Act(const LineSignature& sig, const LogLine& ll, std::string_view content, int64_t t,
           bool benign);
  // One per line action of Act() that takes more than a line or two.
  void ActNodeExit(const LogLine& ll, std::string_view c, int64_t t);
  void ActSummary(std::string_view c);
  void ActStage(const LogLine& ll, std::string_view c, int64_t t);
  void ActConfig(std::string_view c);
  void ActHeartbeat(const LineSignature& sig, const LogLine& ll, std::string_view c, int64_t t);
  void ActTaskRef(const LogLine& ll, std::string_view c);
  void ActOwnDeath(const LineSignature& sig, const LogLine& ll, std::string_view c, int64_t t);
  void ActHeartbeatTimeout(std::string_view c);
  void ActRcclWave(const LogLine& ll, std::string_view c);
  void ActCheckpointSaved(const LineSignature& sig, const LogLine& ll, std::string_view c, int64_t t);
  void ActRestore(const LineSignature& sig, const LogLine& ll, std::string_view c, int64_t t);
  void ActPrometheus(std::string_view c);
  void ActSlurmCancel(const LogLine& ll, std::string_view c, int64_t t);
  void ActSrunExit(const LogLine& ll, std::string_view c, int64_t t, bool benign);
  void ActTraceback(const LineSignature& sig, const LogLine& ll, std::string_view c, int64_t t);
  void ActJobEnd(const LogLine& ll, std::string_view c, int64_t t);
  bool OpenContext() const;
  void Merge(const Impl& b);
  // The parts of Merge(), in its order.
  void MergeCountsAndEvents(const Impl& b, uint64_t L);
  void MergeSteps(const Impl& b, uint64_t L);
  void MergeStepRecord(const StepRecord& r, StepRecord* a);
  void MergeRanks(const Impl& b, uint64_t L);
  void MergeSignatures(const Impl& b, uint64_t L);
  void MergeHeartbeats(const Impl& b, uint64_t L);
  void MergeTracebacks(const Impl& b, uint64_t L);
  void MergeWaves(const Impl& b, uint64_t L, uint64_t a_step_lines, int64_t a_max_step);
  void MergeRestOfScan(const Impl& b, uint64_t L);
  int64_t Time(const LogLine& ll);
  void Tail(const char* data, size_t end, bool partial_last);
};

// Whether the lines after this point could still change what was recorded before it.
bool LogScanner::Impl::OpenContext() const {
  if (full_lines > 0 || summary_lines > 0 || in_stage_table || in_long_line || !pending_tb.empty()) return true;
  if (hb_open >= 0 && line_no - hb_line <= 256) return true;
  if (scan.memstats && line_no - scan.memstats->line < 256) return true;
  // An RCCL init wave with no step after it may go on.
  if (!scan.init_waves.empty() && scan.step_lines == step_lines_at_wave) return true;
  return false;
}

namespace {

void Shift(LineRef* r, uint64_t by) {
  if (r->line) r->line += by;
}

LineRef Shifted(LineRef r, uint64_t by) {
  Shift(&r, by);
  return r;
}

}  // namespace

// Appends continuation `b` (which began where this part ended, line_no lines in) to this
// part; each piece of state below is merged in the order it always was.
void LogScanner::Impl::Merge(const Impl& b) {
  const uint64_t L = line_no;
  const uint64_t a_step_lines = scan.step_lines;
  const int64_t a_max_step = max_step;
  MergeCountsAndEvents(b, L);
  MergeSteps(b, L);
  MergeRanks(b, L);
  MergeSignatures(b, L);
  MergeHeartbeats(b, L);
  MergeTracebacks(b, L);
  MergeWaves(b, L, a_step_lines, a_max_step);
  MergeRestOfScan(b, L);
  summary_lines = b.summary_lines;
  in_stage_table = b.in_stage_table;
  in_long_line = b.in_long_line;
}

void LogScanner::Impl::MergeCountsAndEvents(const Impl& b, uint64_t L) {
  offset += b.offset;
  line_no += b.line_no;
  scan.bytes += b.scan.bytes;
  scan.oversized_lines += b.scan.oversized_lines;
  scan.steps_truncated |= b.scan.steps_truncated;
  scan.benign_lines += b.scan.benign_lines;
  for (const auto& [k, v] : b.scan.config)
    if (scan.config.size() < 4096) scan.config.emplace(k, v);
  for (auto ev : b.scan.stages) {
    ev.line += L;
    if (scan.stages.size() < kMaxListed) scan.stages.push_back(ev);
  }
  if (b.scan.summary.present) {
    scan.summary = b.scan.summary;
    scan.summary.line += L;
    if (scan.summary.status_line) scan.summary.status_line += L;
  }
  for (auto ne : b.scan.node_exits) {
    Shift(&ne.ref, L);
    if (scan.node_exits.size() < 4 * kMaxListed) scan.node_exits.push_back(std::move(ne));
  }
  for (const auto& [t, c] : b.scan.task_exit_codes) scan.task_exit_codes[t] = c;
}

void LogScanner::Impl::MergeSteps(const Impl& b, uint64_t L) {
  // Steps: the same step may have lines on both sides of the split; a part read in another
  // progress format (a quoted excerpt) does not mix into the series.
  const bool other_format = !scan.step_format.empty() && !b.scan.step_format.empty() && scan.step_format != b.scan.step_format;
  if (scan.step_format.empty()) scan.step_format = b.scan.step_format;
  if (!other_format) scan.step_total = std::max(scan.step_total, b.scan.step_total);
  for (StepRecord r : other_format ? std::vector<StepRecord>{} : b.scan.steps) {
    r.first_line += L;
    r.last_line += L;
    auto it = step_index.find(r.step);
    if (it == step_index.end()) {
      if (scan.steps.size() >= kMaxSteps) {
        scan.steps_truncated = true;
        continue;
      }
      step_index.emplace(r.step, static_cast<uint32_t>(scan.steps.size()));
      scan.steps.push_back(r);
      continue;
    }
    MergeStepRecord(r, &scan.steps[it->second]);
  }
  cached_step = -1;
  scan.step_lines += b.scan.step_lines;
  max_step = std::max(max_step, b.max_step);
}

// One step seen on both sides of the split: `r` (the later part's, lines shifted) into `a`.
void LogScanner::Impl::MergeStepRecord(const StepRecord& r, StepRecord* ap) {
  StepRecord& a = *ap;
  if (r.rank >= 0 && (a.rank < 0 || r.rank < a.rank)) {
    a.rank = r.rank;
    a.seconds = r.seconds;
    a.tflops = r.tflops;
    a.mfu = r.mfu;
    a.loss = r.loss;
  }
  a.entries += r.entries;
  a.tgs_sum += r.tgs_sum;
  a.tgs_n += r.tgs_n;
  a.last_line = r.last_line;
  if (r.first_time != kNoTime && (a.first_time == kNoTime || r.first_time < a.first_time)) a.first_time = r.first_time;
  if (r.last_time != kNoTime && (a.last_time == kNoTime || r.last_time > a.last_time)) a.last_time = r.last_time;
}

void LogScanner::Impl::MergeRanks(const Impl& b, uint64_t L) {
  for (size_t i = 0; i < b.rank_vec.size(); ++i) {
    if (!b.rank_seen[i]) continue;
    const RankRecord& r = b.rank_vec[i];
    RankRecord& a = *Rank(static_cast<int>(i) - 1);
    if (r.last_step >= 0) {
      a.last_step = r.last_step;
      a.last_step_line = r.last_step_line + L;
      if (r.last_step_time != kNoTime) a.last_step_time = r.last_step_time;
    }
    a.step_lines += r.step_lines;
    a.seconds_sum += r.seconds_sum;
    a.reached_barrier |= r.reached_barrier;
    if (!a.own_death_line && r.own_death_line) {
      a.own_death_line = r.own_death_line + L;
      a.own_death_time = r.own_death_time;
    }
    if (r.last_line) a.last_line = r.last_line + L;
  }
}

void LogScanner::Impl::MergeSignatures(const Impl& b, uint64_t L) {
  for (const auto& [kind, h] : b.scan.signatures) {
    SignatureHits& a = scan.signatures[kind];
    if (a.cls.empty()) a.cls = h.cls;
    a.count += h.count;
    for (const auto& r : h.first)
      if (a.first.size() < kKeepOccurrences) a.first.push_back(Shifted(r, L));
    for (const auto& r : h.last) {
      if (a.last.size() == kKeepOccurrences) a.last.erase(a.last.begin());
      a.last.push_back(Shifted(r, L));
    }
  }
}

void LogScanner::Impl::MergeHeartbeats(const Impl& b, uint64_t L) {
  if (b.hb_open >= 0 && scan.heartbeats.size() + static_cast<size_t>(b.hb_open) < kMaxListed) {
    hb_open = static_cast<int>(scan.heartbeats.size()) + b.hb_open;
    hb_rank = b.hb_rank;
    hb_line = b.hb_line + L;
  }
  for (auto h : b.scan.heartbeats) {
    Shift(&h.ref, L);
    if (scan.heartbeats.size() < kMaxListed) scan.heartbeats.push_back(std::move(h));
  }
  if (!scan.heartbeat_timeout_seconds) scan.heartbeat_timeout_seconds = b.scan.heartbeat_timeout_seconds;
}

void LogScanner::Impl::MergeTracebacks(const Impl& b, uint64_t L) {
  const uint64_t seq0 = scan.tracebacks_total;
  for (auto [seq, rec] : b.tracebacks) {
    Shift(&rec.start, L);
    Shift(&rec.exception, L);
    if (tracebacks.size() >= 2 * kKeepTracebacks)
      tracebacks.erase(tracebacks.begin() + static_cast<long>(kKeepTracebacks));
    tracebacks.emplace_back(seq + seq0, std::move(rec));
  }
  scan.tracebacks_total += b.scan.tracebacks_total;
  pending_tb = b.pending_tb;
  for (auto& p : pending_tb) p.seq += seq0;
}

// Slurm ends and RCCL init waves; `a_step_lines` and `a_max_step` are this part's counts
// from before the merge.
void LogScanner::Impl::MergeWaves(const Impl& b, uint64_t L, uint64_t a_step_lines, int64_t a_max_step) {
  for (auto e : b.scan.slurm_ends) {
    Shift(&e.ref, L);
    if (scan.slurm_ends.size() < kMaxListed) scan.slurm_ends.push_back(std::move(e));
  }
  for (auto w : b.scan.init_waves) {
    w.first_line += L;
    w.last_line += L;
    w.after_step = std::max(w.after_step, a_max_step);
    if (scan.init_waves.size() < kMaxListed) scan.init_waves.push_back(w);
  }
  if (!b.scan.init_waves.empty()) {
    wave_members = b.wave_members;
    step_lines_at_wave = b.step_lines_at_wave + a_step_lines;
  }
}

void LogScanner::Impl::MergeRestOfScan(const Impl& b, uint64_t L) {
  if (!scan.memstats && b.scan.memstats) {
    scan.memstats = Shifted(*b.scan.memstats, L);
    scan.memstats_lines = b.scan.memstats_lines;
  }
  if (!scan.barrier && b.scan.barrier) scan.barrier = Shifted(*b.scan.barrier, L);
  for (int64_t c : b.scan.checkpoint_steps)
    if (scan.checkpoint_steps.size() < 100000) scan.checkpoint_steps.push_back(c);
  if (b.scan.restored_step) scan.restored_step = b.scan.restored_step;
  scan.single_replica_restore |= b.scan.single_replica_restore;
  scan.uses_ray |= b.scan.uses_ray;
  if (!scan.prometheus_port) scan.prometheus_port = b.scan.prometheus_port;
  if (b.scan.first_time != kNoTime && (scan.first_time == kNoTime || b.scan.first_time < scan.first_time)) {
    scan.first_time = b.scan.first_time;
    scan.first_time_line = b.scan.first_time_line + L;
  }
  if (b.scan.last_time != kNoTime && (scan.last_time == kNoTime || b.scan.last_time >= scan.last_time)) {
    scan.last_time = b.scan.last_time;
    scan.last_line_with_time = b.scan.last_line_with_time + L;
  }
  for (auto e : b.scan.job_ends) {
    Shift(&e.ref, L);
    if (scan.job_ends.size() < kMaxListed) scan.job_ends.push_back(std::move(e));
  }
  if (!scan.training_end && b.scan.training_end) scan.training_end = Shifted(*b.scan.training_end, L);
  if (b.scan.tail_time != kNoTime) {
    scan.tail_time = b.scan.tail_time;
    scan.tail_time_line = b.scan.tail_time_line + L;
  }
  if (!b.scan.tail.empty()) {
    scan.tail.clear();
    for (const auto& r : b.scan.tail) scan.tail.push_back(Shifted(r, L));
  }
  if (scan.clock_layout.empty()) scan.clock_layout = b.scan.clock_layout;
  scan.clock_year_inferred |= b.scan.clock_year_inferred;
  scan.clock_anchored |= b.scan.clock_anchored;
}

LineRef LogScanner::Impl::Ref(const LogLine& ll, std::string_view content, int64_t t) const {
  LineRef r;
  r.line = line_no;
  r.rank = ll.rank;
  r.time = t;
  r.text = std::string(content.substr(0, kMaxEvidenceText));
  return r;
}

void LogScanner::Impl::Record(std::string_view kind, std::string_view cls, const LineRef& ref) {
  if (!cls.empty() && cls != "python_exception" && kind != "srun_task_exit") {
    last_record_line = line_no;
    last_record_cls = std::string(cls);
  }
  auto& h = scan.signatures[std::string(kind)];
  if (h.cls.empty()) h.cls = std::string(cls);
  ++h.count;
  if (h.first.size() < kKeepOccurrences) h.first.push_back(ref);
  if (h.last.size() == kKeepOccurrences) h.last.erase(h.last.begin());
  h.last.push_back(ref);
}

size_t LogScanner::Impl::Feed(const char* data, size_t n, bool at_eof) {
  size_t cur = 0;
  if (in_long_line) {
    const void* nl = std::memchr(data, '\n', n);
    if (!nl) {
      if (at_eof) in_long_line = false;
      offset += n;
      scan.bytes += n;
      return n;
    }
    cur = static_cast<size_t>(static_cast<const char*>(nl) - data) + 1;
    in_long_line = false;
  }
  ScanLiterals(scan.step_format).FindHits(data, n, cur, &hits);
  size_t next_hit = 0;
  while (cur < n) {
    if (full_lines > 0 || summary_lines > 0 || !pending_tb.empty() || in_stage_table) {
      const void* nl = std::memchr(data + cur, '\n', n - cur);
      if (!nl && !at_eof) break;
      size_t end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - data) : n;
      ++line_no;
      Process(data, n, cur, end, -1);
      if (full_lines > 0) --full_lines;
      cur = nl ? end + 1 : n;
      continue;
    }
    while (next_hit < hits.size() && hits[next_hit].pos < cur) ++next_hit;
    if (next_hit == hits.size()) {
      if (at_eof) {
        line_no += CountNewlines(data + cur, n - cur);
        if (data[n - 1] != '\n') ++line_no;
        cur = n;
      } else {
        const void* last = memrchr(data + cur, '\n', n - cur);
        if (last) {
          size_t end = static_cast<size_t>(static_cast<const char*>(last) - data) + 1;
          line_no += CountNewlines(data + cur, end - cur);
          cur = end;
        }
      }
      break;
    }
    const LiteralSet::Hit& hit = hits[next_hit];
    size_t pos = hit.pos;
    if (data[pos] == '\n') ++pos;   // literals that begin with the previous line's end
    const void* ls = pos > cur ? memrchr(data + cur, '\n', pos - cur) : nullptr;
    size_t start = ls ? static_cast<size_t>(static_cast<const char*>(ls) - data) + 1 : cur;
    line_no += CountNewlines(data + cur, start - cur);
    cur = start;
    const void* le = std::memchr(data + pos, '\n', n - pos);
    if (!le && !at_eof) break;
    size_t end = le ? static_cast<size_t>(static_cast<const char*>(le) - data) : n;
    ++line_no;
    Process(data, n, start, end, hit.id);
    cur = le ? end + 1 : n;
  }
  if (cur > 0) Tail(data, cur, at_eof && data[cur - 1] != '\n');
  offset += cur;
  scan.bytes += cur;
  return cur;
}

int64_t LogScanner::Impl::Time(const LogLine& ll) {
  std::optional<Stamp> st = SplitterStamp(ll);
  if (!st) {
    // A log whose lines carry no stamp the line splitter knows keeps that layout: after
    // kStampProbeLines fruitless searches only every kStampProbeLines-th line is searched
    // (the log's last stamp is read by Tail() anyway). Saves ~12% of a MaxText scan.
    if (stamp_hits > 0 || stamp_misses < kStampProbeLines || stamp_misses % kStampProbeLines == 0)
      st = FindStamp(ll.content);
    if (st) ++stamp_hits;
    else ++stamp_misses;
  }
  if (!st) return kNoTime;
  int64_t t = clock.Resolve(*st);
  if (t == INT64_MIN) return kNoTime;
  if (scan.clock_layout.empty()) scan.clock_layout = st->layout;
  scan.clock_year_inferred = clock.year_inferred();
  scan.clock_anchored = clock.anchored();
  return t;
}

// The last lines of what was consumed so far: the last time-stamped line (liveness reads
// the log's own clock, and the last line often is no candidate line) and the last few
// non-empty lines (an exception that ends the log). Looks back at most kTailBytes.
void LogScanner::Impl::Tail(const char* data, size_t end, bool partial_last) {
  constexpr size_t kTailBytes = 64 * 1024;
  constexpr size_t kTailLines = 24;
  const size_t floor = end > kTailBytes ? end - kTailBytes : 0;
  std::vector<LineRef> found;
  bool stamp_found = false;
  uint64_t line = line_no;              // number of the line that ends at `e`
  size_t e = partial_last ? end : end - 1;   // position of its '\n' (or the end)
  LogClock probe = clock;
  while (e > floor && (found.size() < kTailLines || !stamp_found)) {
    const void* nl = memrchr(data + floor, '\n', e - floor);
    size_t b = nl ? static_cast<size_t>(static_cast<const char*>(nl) - data) + 1 : floor;
    if (!nl && floor > 0) break;          // the line starts before the window
    std::string_view raw(data + b, std::min<size_t>(e - b, kMaxLineExamined));
    LogLine ll = SplitLogLine(raw);
    std::string_view c = Trim(ll.content);
    if (!c.empty() && found.size() < kTailLines) {
      LineRef r;
      r.line = line;
      r.rank = ll.rank;
      r.text = HasAnsi(c) ? StripAnsi(c.substr(0, kMaxEvidenceText)) : std::string(c.substr(0, kMaxEvidenceText));
      found.push_back(std::move(r));
    }
    if (!stamp_found) {
      std::optional<Stamp> st = SplitterStamp(ll);
      if (!st) st = FindStamp(ll.content);
      if (st) {
        int64_t t = probe.Resolve(*st);
        if (t != INT64_MIN) {
          stamp_found = true;
          scan.tail_time = t;
          scan.tail_time_line = line;
          if (!found.empty() && found.back().line == line) found.back().time = t;
        }
      }
    }
    if (b == 0 || !nl) break;
    e = b - 1;
    --line;
  }
  if (found.empty()) return;
  std::reverse(found.begin(), found.end());
  if (found.size() < kTailLines) {        // keep older lines from earlier blocks in front
    std::vector<LineRef> keep;
    for (const auto& r : scan.tail)
      if (r.line < found.front().line) keep.push_back(r);
    size_t room = kTailLines - found.size();
    if (keep.size() > room) keep.erase(keep.begin(), keep.end() - static_cast<long>(room));
    keep.insert(keep.end(), found.begin(), found.end());
    found.swap(keep);
  }
  scan.tail = std::move(found);
}

void LogScanner::Impl::LongPiece(const char* data, size_t n) {
  if (!in_long_line) {
    ++line_no;
    ++scan.oversized_lines;
    Process(data, n, 0, std::min(n, kMaxLineExamined), -1);
    in_long_line = true;
  }
  offset += n;
  scan.bytes += n;
}

void LogScanner::Impl::Process(const char* data, size_t n, size_t start, size_t end, int hint) {
  std::string_view raw(data + start, end - start);
  if (raw.size() > kMaxLineExamined) {
    raw = raw.substr(0, kMaxLineExamined);
    ++scan.oversized_lines;
  }
  LogLine ll = SplitLogLine(raw);
  std::string_view content = ll.content;
  if (HasAnsi(content)) {
    ansi_free = StripAnsi(content);
    content = ansi_free;
  }
  int64_t t = Time(ll);
  if (t != kNoTime) {
    if (scan.first_time == kNoTime || t < scan.first_time) {
      scan.first_time = t;
      scan.first_time_line = line_no;
    }
    if (scan.last_time == kNoTime || t >= scan.last_time) {
      scan.last_time = t;
      scan.last_line_with_time = line_no;
    }
  }
  if (RankRecord* r = Rank(ll.rank)) r->last_line = line_no;

  const auto& table = LineSignatures();
  const LineAction hint_action = hint >= 0 ? table[static_cast<size_t>(hint)].action : LineAction::kSignature;
  // A step line is nothing else; a line that only contains a progress literal ("step" in
  // a traceback, "at step N" in a checkpoint message) goes on to the full look below.
  if (hint >= 0 && hint_action == LineAction::kStep && Step(ll, content, t)) {
    if (!pending_tb.empty()) Context(ll, content, t);
    return;
  }
  // Fast paths for the two kinds of noise that reach here by the thousand: harmless lines
  // (their first literal is a benign marker) and RCCL communicator-init warnings.
  if (hint >= 0 && (hint_action == LineAction::kBenign || hint_action == LineAction::kRcclWave)) {
    if (hint_action == LineAction::kBenign) ++scan.benign_lines;
    else Act(table[static_cast<size_t>(hint)], ll, content, t, true);
    if (!pending_tb.empty() || summary_lines > 0 || full_lines > 0) Context(ll, content, t);
    return;
  }
  // Every literal in the line, including those that begin with the previous '\n' or end
  // with this line's '\n'.
  size_t a = start > 0 ? start - 1 : start;
  size_t b = std::min(n, start + raw.size() + 1);
  ScanLiterals(scan.step_format).FindAll(data + a, b - a, &ids);
  if (!ids.empty()) {
    bool benign = false;
    for (int id : ids) benign |= table[static_cast<size_t>(id)].action == LineAction::kBenign;
    if (benign) ++scan.benign_lines;
    std::string_view done_kinds[8];
    size_t ndone = 0;
    for (int id : ids) {
      const LineSignature& sig = table[static_cast<size_t>(id)];
      if (sig.action == LineAction::kBenign) continue;
      if (sig.action == LineAction::kSignature || sig.action == LineAction::kHeartbeat ||
          sig.action == LineAction::kTraceback || sig.action == LineAction::kStep) {
        bool dup = false;
        for (size_t i = 0; i < ndone; ++i) dup |= done_kinds[i] == sig.kind;
        if (dup) continue;
        if (ndone < 8) done_kinds[ndone++] = sig.kind;
      }
      Act(sig, ll, content, t, benign);
    }
  }
  Context(ll, content, t);
}

bool LogScanner::Impl::Step(const LogLine& ll, std::string_view content, int64_t t) {
  StepLine s;
  std::string_view format = "maxtext";
  if (!ParseStepLine(content, &s)) {
    ProgressFields p;
    int f = -1;
    if (!ParseProgressLine(content, &p, &f)) return false;
    format = ProgressFormats()[static_cast<size_t>(f)].name;
    s.step = p.step;
    s.seconds = p.seconds;
    s.tflops = p.tflops;
    s.mfu = p.mfu;
    s.tgs = p.tgs;
    s.loss = p.loss;
    if (p.total > 0) scan.step_total = std::max(scan.step_total, p.total);
  }
  if (scan.step_format.empty()) scan.step_format = format;
  else if (scan.step_format != format) return false;   // one log, one step series
  ++scan.step_lines;
  max_step = std::max(max_step, s.step);
  StepRecord* rec = nullptr;
  auto it = s.step == cached_step ? step_index.end() : step_index.find(s.step);
  if (s.step == cached_step) {
    rec = &scan.steps[cached_step_index];
  } else if (it != step_index.end()) {
    rec = &scan.steps[it->second];
    cached_step = s.step;
    cached_step_index = it->second;
  } else if (scan.steps.size() < kMaxSteps) {
    step_index.emplace(s.step, static_cast<uint32_t>(scan.steps.size()));
    scan.steps.emplace_back();
    rec = &scan.steps.back();
    rec->step = s.step;
    rec->first_line = line_no;
    cached_step = s.step;
    cached_step_index = static_cast<uint32_t>(scan.steps.size() - 1);
  } else {
    scan.steps_truncated = true;
  }
  if (rec) {
    ++rec->entries;
    bool representative = rec->entries == 1 || (ll.rank >= 0 && (rec->rank < 0 || ll.rank < rec->rank));
    if (representative) {
      rec->rank = ll.rank;
      rec->seconds = s.seconds;
      rec->tflops = static_cast<float>(s.tflops);
      rec->mfu = static_cast<float>(s.mfu);
      rec->loss = static_cast<float>(s.loss);
    }
    if (s.tgs >= 0) {
      rec->tgs_sum += s.tgs;
      ++rec->tgs_n;
    }
    rec->last_line = line_no;
    if (t != kNoTime) {
      if (rec->first_time == kNoTime || t < rec->first_time) rec->first_time = t;
      if (rec->last_time == kNoTime || t > rec->last_time) rec->last_time = t;
    }
  }
  if (RankRecord* rp = Rank(ll.rank)) {
    RankRecord& r = *rp;
    r.last_step = s.step;
    r.last_step_line = line_no;
    if (t != kNoTime) r.last_step_time = t;
    ++r.step_lines;
    if (s.seconds > 0) r.seconds_sum += s.seconds;
  }
  return true;
}

void LogScanner::Impl::Act(const LineSignature& sig, const LogLine& ll, std::string_view c,
                           int64_t t, bool benign) {
  switch (sig.action) {
    case LineAction::kStep:
      Step(ll, c, t);
      break;
    case LineAction::kNodeExit:
      ActNodeExit(ll, c, t);
      break;
    case LineAction::kSummary:
      ActSummary(c);
      break;
    case LineAction::kStage:
      ActStage(ll, c, t);
      break;
    case LineAction::kMemstats:
      if (!scan.memstats) scan.memstats = Ref(ll, c, t);
      break;
    case LineAction::kMemstatsLine:
      if (scan.memstats && scan.memstats_lines.size() < 16 && line_no - scan.memstats->line < 256)
        scan.memstats_lines.emplace_back(Trim(c).substr(0, 200));
      break;
    case LineAction::kConfig:
      ActConfig(c);
      break;
    case LineAction::kBarrier:
      if (!scan.barrier) scan.barrier = Ref(ll, c, t);
      if (RankRecord* r = Rank(ll.rank)) r->reached_barrier = true;
      break;
    case LineAction::kHeartbeat:
      if (benign) break;
      ActHeartbeat(sig, ll, c, t);
      break;
    case LineAction::kTaskRef:
      ActTaskRef(ll, c);
      break;
    case LineAction::kOwnDeath:
      ActOwnDeath(sig, ll, c, t);
      break;
    case LineAction::kHeartbeatTimeout:
      ActHeartbeatTimeout(c);
      break;
    case LineAction::kRcclWave:
      ActRcclWave(ll, c);
      break;
    case LineAction::kCheckpointSaved:
      ActCheckpointSaved(sig, ll, c, t);
      break;
    case LineAction::kRestore:
      ActRestore(sig, ll, c, t);
      break;
    case LineAction::kSingleReplica:
      scan.single_replica_restore = true;
      break;
    case LineAction::kRay:
      scan.uses_ray = true;
      break;
    case LineAction::kPrometheus:
      ActPrometheus(c);
      break;
    case LineAction::kSlurmCancel:
      ActSlurmCancel(ll, c, t);
      break;
    case LineAction::kSrunExit:
      ActSrunExit(ll, c, t, benign);
      break;
    case LineAction::kTraceback:
      if (benign) break;
      ActTraceback(sig, ll, c, t);
      break;
    case LineAction::kJobEnd:
      ActJobEnd(ll, c, t);
      break;
    case LineAction::kTrainingEnd:
      if (!scan.training_end) scan.training_end = Ref(ll, c, t);
      break;
    case LineAction::kSignature:
      if (benign || !Refined(sig.refine, c)) break;
      Record(sig.kind, sig.cls, Ref(ll, c, t));
      break;
    case LineAction::kBenign:
      break;
  }
}

void LogScanner::Impl::ActNodeExit(const LogLine& ll, std::string_view c, int64_t t) {
  static const RE2 kNodeExitRe(R"(NODE_EXIT host=(\S+) exit=(-?\d+))");
  std::string host;
  int code;
  if (RE2::PartialMatch(c, kNodeExitRe, &host, &code) && scan.node_exits.size() < 4 * kMaxListed)
    scan.node_exits.push_back({host, code, Ref(ll, c, t)});
}

void LogScanner::Impl::ActSummary(std::string_view c) {
  if (c.find("JOB SUMMARY") != std::string_view::npos && c.find("====") != std::string_view::npos) {
    scan.summary = JobSummary();
    scan.summary.present = true;
    scan.summary.line = line_no;
    summary_lines = 8;
  }
}

void LogScanner::Impl::ActStage(const LogLine& ll, std::string_view c, int64_t t) {
  static const RE2 kStageRe(R"(== (Preflight|Docker pull|ECC check|Training) (BEGIN|END|TIMEOUT|FAILED) \(([^)]*)\))");
  std::string stage, event, inner;
  if (!RE2::PartialMatch(c, kStageRe, &stage, &event, &inner)) return;
  StageEvent ev;
  ev.stage = stage;
  ev.event = event;
  ev.line = line_no;
  double v;
  if (event == "BEGIN") {
    if (NumberAfter(inner, "timeout=", 0, &v)) ev.timeout_seconds = v;
  } else if (event == "END") {
    if (NumberAfter(inner, "", 0, &v)) ev.elapsed_seconds = v;
  } else if (event == "TIMEOUT") {
    size_t slash = inner.find('/');
    if (NumberAfter(inner, "", 0, &v)) ev.elapsed_seconds = v;
    if (slash != std::string::npos && NumberAfter(inner, "/", 0, &v)) ev.timeout_seconds = v;
  } else {
    int64_t code;
    if (IntAfter(inner, "exit=", &code)) ev.exit_code = static_cast<int>(code);
    size_t comma = inner.find(',');
    if (comma != std::string::npos && NumberAfter(inner, ",", 0, &v)) ev.elapsed_seconds = v;
  }
  if (scan.stages.size() < kMaxListed) scan.stages.push_back(ev);
  if (event == "TIMEOUT") Record("stage_timeout", "stage_timeout", Ref(ll, c, t));
  if (event == "FAILED") Record("stage_failed", "stage_fail", Ref(ll, c, t));
}

void LogScanner::Impl::ActConfig(std::string_view c) {
  static const RE2 kConfigRe(R"(Config param ([A-Za-z0-9_.\-]+):\s*(.*))");
  std::string name, value;
  if (RE2::PartialMatch(c, kConfigRe, &name, &value) && scan.config.size() < 4096)
    scan.config.emplace(name, std::string(Trim(value).substr(0, 512)));
}

void LogScanner::Impl::ActHeartbeat(const LineSignature& sig, const LogLine& ll, std::string_view c,
                                    int64_t t) {
  LineRef ref = Ref(ll, c, t);
  Record(sig.kind, sig.cls, ref);
  if (scan.heartbeats.size() < kMaxListed) {
    HeartbeatReport rep;
    rep.ref = ref;
    TaskIds(c, &rep.tasks);
    scan.heartbeats.push_back(std::move(rep));
    hb_open = static_cast<int>(scan.heartbeats.size()) - 1;
    hb_rank = ll.rank;
    hb_line = line_no;
  }
}

void LogScanner::Impl::ActTaskRef(const LogLine& ll, std::string_view c) {
  if (hb_open >= 0 && ll.rank == hb_rank && line_no - hb_line <= 256) {
    auto& tasks = scan.heartbeats[static_cast<size_t>(hb_open)].tasks;
    std::vector<int> found;
    TaskIds(c, &found);
    for (int id : found)
      if (std::find(tasks.begin(), tasks.end(), id) == tasks.end()) tasks.push_back(id);
    hb_line = line_no;   // lists continue line after line
  }
}

void LogScanner::Impl::ActOwnDeath(const LineSignature& sig, const LogLine& ll, std::string_view c,
                                   int64_t t) {
  if (ll.rank >= 0 && Rank(ll.rank)) {
    RankRecord& r = *Rank(ll.rank);
    if (!r.own_death_line) {
      r.own_death_line = line_no;
      r.own_death_time = t;
    }
  }
  Record(sig.kind, "", Ref(ll, c, t));
}

void LogScanner::Impl::ActHeartbeatTimeout(std::string_view c) {
  static const RE2 kTimeoutRe(R"((?i)heartbeat_timeout(?:_seconds)?["']?\s*[=:]\s*["']?(\d+))");
  int64_t v;
  if (!scan.heartbeat_timeout_seconds && RE2::PartialMatch(c, kTimeoutRe, &v) && v > 0)
    scan.heartbeat_timeout_seconds = v;
}

void LogScanner::Impl::ActRcclWave(const LogLine& ll, std::string_view c) {
  // One line per (task, device) and communicator: the wave is over when a member
  // reports again, or when training steps happened in between.
  int dev = -1;
  size_t lb = c.find(" [");
  if (lb != std::string_view::npos && lb < c.find("init.cc")) {
    int64_t d;
    if (IntAfter(c, " [", &d, lb)) dev = static_cast<int>(d);
  }
  auto member = std::make_pair(ll.rank, dev);
  bool new_wave = scan.init_waves.empty() || scan.step_lines != step_lines_at_wave ||
                  wave_members.count(member) > 0;
  if (new_wave) {
    if (scan.init_waves.size() >= kMaxListed) return;
    InitWave w;
    w.first_line = line_no;
    w.after_step = max_step;
    scan.init_waves.push_back(w);
    wave_members.clear();
  }
  if (wave_members.size() < kMaxRanks) wave_members.insert(member);
  InitWave& w = scan.init_waves.back();
  w.last_line = line_no;
  ++w.lines;
  step_lines_at_wave = scan.step_lines;
}

void LogScanner::Impl::ActCheckpointSaved(const LineSignature& sig, const LogLine& ll,
                                          std::string_view c, int64_t t) {
  int64_t step;
  if (IntAfter(c, "at step", &step) && scan.checkpoint_steps.size() < 100000 &&
      (scan.checkpoint_steps.empty() || scan.checkpoint_steps.back() != step))
    scan.checkpoint_steps.push_back(step);
  Record(sig.kind, "", Ref(ll, c, t));
}

void LogScanner::Impl::ActRestore(const LineSignature& sig, const LogLine& ll, std::string_view c,
                                  int64_t t) {
  int64_t step;
  if (IntAfter(c, "directory step", &step)) scan.restored_step = step;
  Record(sig.kind, "", Ref(ll, c, t));
}

void LogScanner::Impl::ActPrometheus(std::string_view c) {
  int64_t port;
  if (!scan.prometheus_port && IntAfter(c, "Started on port", &port) && port > 0 && port < 65536)
    scan.prometheus_port = static_cast<int>(port);
}

void LogScanner::Impl::ActSlurmCancel(const LogLine& ll, std::string_view c, int64_t t) {
  static const RE2 kCancelRe(R"(CANCELLED AT (\S+)(?: DUE TO ([A-Z][A-Z ]*[A-Z]))?)");
  std::string when, reason;
  if (!RE2::PartialMatch(c, kCancelRe, &when, &reason)) return;
  SlurmEnd e;
  e.ref = Ref(ll, c, t);
  e.reason = reason;
  if (auto ts = ParseIso8601(when)) e.time = *ts;
  if (scan.slurm_ends.size() < kMaxListed) scan.slurm_ends.push_back(e);
  const char* cls = reason == "TIME LIMIT" ? "time_limit"
                    : reason == "PREEMPTION" || reason == "JOB REQUEUE" ? "preempted"
                    : reason == "NODE FAILURE" ? "node_fail"
                                               : "cancelled";
  // srun --kill-on-bad-exit cancels the step itself after a task failed: no one cancelled.
  if (reason.empty() && task_failed && Contains(c, "*** STEP ")) Record("step_cancel_after_task_failure", cls, e.ref);
  else Record(std::string("slurm_") + cls, cls, e.ref);
}

void LogScanner::Impl::ActSrunExit(const LogLine& ll, std::string_view c, int64_t t, bool benign) {
  static const RE2 kSrunExitRe(R"(tasks? (\d+)(?:-\d+)?: Exited with exit code (\d+))");
  int task, code;
  LineRef ref = Ref(ll, c, t);
  if (RE2::PartialMatch(c, kSrunExitRe, &task, &code)) {
    if (scan.task_exit_codes.size() < kMaxRanks) scan.task_exit_codes[task] = code;
    // A task that failed (not one stopped by a signal from outside: 130/143 SIGINT/
    // SIGTERM, 137 SIGKILL) lost its rank: an event at this line, which explains the
    // peers' "connection reset by peer" but not a traceback printed before it.
    if (code != 0 && code != 130 && code != 143 && code != 137) {
      Record("srun_task_exit", "python_exception", ref);
      task_failed = true;
    }
  } else if (benign) {
    return;
  } else if (Contains(c, ": Out Of Memory")) {
    Record("srun_oom", "host_oom", ref);
  } else if (Contains(c, ": Killed")) {
    Record("srun_task_killed", "host_oom", ref);
  } else if (Contains(c, "Node failure")) {
    Record("srun_node_failure", "node_fail", ref);
  }
}

void LogScanner::Impl::ActTraceback(const LineSignature& sig, const LogLine& ll, std::string_view c,
                                    int64_t t) {
  LineRef ref = Ref(ll, c, t);
  Record(sig.kind, sig.cls, ref);
  uint64_t seq = scan.tracebacks_total++;
  TracebackRecord rec;
  rec.start = ref;
  const bool native = sig.kind == "cpp_terminate";
  rec.native = native;
  if (tracebacks.size() >= 2 * kKeepTracebacks)
    tracebacks.erase(tracebacks.begin() + static_cast<long>(kKeepTracebacks));
  tracebacks.emplace_back(seq, std::move(rec));
  if (pending_tb.size() < 16) pending_tb.push_back({seq, ll.rank, kTracebackBudget, native, line_no, ref, {}, {}, 0});
}

void LogScanner::Impl::ActJobEnd(const LogLine& ll, std::string_view c, int64_t t) {
  static const RE2 kExitRe(R"((?i)(?:exit[ _]?code|exit status|return code|\brc)\s*[=:]?\s*\(?\s*(-?\d+))");
  JobEnd e;
  e.ref = Ref(ll, c, t);
  int code;
  if (RE2::PartialMatch(c, kExitRe, &code)) e.exit_code = code;
  else if (Contains(c, "uccessfully")) e.exit_code = 0;
  if (scan.job_ends.size() < kMaxListed) scan.job_ends.push_back(std::move(e));
}

void LogScanner::Impl::Context(const LogLine& ll, std::string_view c, int64_t t) {
  // Header: KEY=value lines and the stage-timeout table near the top.
  if (header && line_no <= static_cast<uint64_t>(kHeaderLines)) {
    size_t eq = c.find('=');
    if (eq != std::string_view::npos && IsUpperKey(c.substr(0, eq)) && ll.rank < 0)
      scan.header.emplace(std::string(c.substr(0, eq)), std::string(StripQuotes(Trim(c.substr(eq + 1)))));
    if (Contains(c, "STAGE TIMEOUTS")) {
      in_stage_table = true;
    } else if (in_stage_table) {
      std::string_view row = Trim(c);
      size_t sp = row.find(' ');
      double v;
      if (sp != std::string_view::npos && NumberAfter(row, " ", 0, &v)) {
        scan.stage_timeouts[std::string(row.substr(0, sp))] = v;
      } else if (sp != std::string_view::npos && Contains(row, "none")) {
        scan.stage_timeouts[std::string(row.substr(0, sp))] = -1;
      } else {
        in_stage_table = false;
      }
    }
  } else {
    in_stage_table = false;
  }
  // JOB SUMMARY body.
  if (summary_lines > 0 && line_no > scan.summary.line) {
    --summary_lines;
    std::string_view s = Trim(c);
    auto value = [&](std::string_view key) -> std::optional<std::string_view> {
      if (s.substr(0, key.size()) != key) return std::nullopt;
      return Trim(s.substr(key.size()));
    };
    JobSummary& js = scan.summary;
    if (auto v = value("Job:")) js.job = std::string(*v);
    else if (auto v2 = value("Model:")) js.model = std::string(*v2);
    else if (auto v3 = value("Nodes:")) {
      int64_t n;
      if (IntAfter(*v3, "", &n)) js.nodes = static_cast<int>(n);
    } else if (auto v4 = value("Wall:")) {
      js.wall = std::string(*v4);
      js.wall_seconds = ParseWall(*v4);
    } else if (auto v5 = value("Status:")) {
      static const RE2 kStatusRe(R"((SUCCESS|FAILED)\s*\(exit\s+(-?\d+)\)\s*(?:(?:—|--|-)\s*(.*))?)");
      std::string status, reason;
      int code;
      if (RE2::PartialMatch(*v5, kStatusRe, &status, &code, &reason)) {
        js.status = status;
        js.exit_code = code;
        js.reason = std::string(Trim(reason));
        js.status_line = line_no;
      }
    } else if (s.size() >= 10 && s.find_first_not_of('=') == std::string_view::npos) {
      summary_lines = 0;
    }
  }
  // Tracebacks: the exception line is the first unindented line of the same task.
  if (!pending_tb.empty()) TracebackEnds(ll, c, t);
}

namespace {

// What an exception line looks like: "ValueError: …", "torch.cuda.OutOfMemoryError: …",
// "KeyboardInterrupt", possibly after a launcher's word ("[rank0]: RuntimeError: …").
bool LooksLikeException(std::string_view s) {
  static const RE2 kExceptionRe(
      R"(^(?:\S+\s+)?[A-Za-z_][\w.]*(?::\s|:$|$)|[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Failure|Fault|Timeout)\b)");
  return RE2::PartialMatch(s, kExceptionRe);
}

// Ranks sharing one unprefixed log interleave their tracebacks, even mid-line: a caret
// marker torn in pieces ("^"), a source line pushed to column 0. Such debris is not an end.
bool CaretDebris(std::string_view s) {
  s = Trim(s);
  return !s.empty() && s.find_first_not_of("^~ ") == std::string_view::npos;
}

}  // namespace

void LogScanner::Impl::TracebackEnds(const LogLine& ll, std::string_view c, int64_t t) {
  auto close = [&](const PendingTraceback& p, const LineRef& ex, bool own_line) {
    for (auto& [seq, rec] : tracebacks)
      if (seq == p.seq && rec.exception.line == 0) {
        rec.exception = ex;
        // The exception's own words may prove a class (an NCCL error, a deadline).
        if (own_line && last_record_line == line_no) rec.exception_cls = last_record_cls;
      }
  };
  bool line_taken = false;   // one exception line ends one traceback (interleaved ones wait)
  for (size_t i = 0; i < pending_tb.size();) {
    PendingTraceback& p = pending_tb[i];
    bool done = false;
    if (p.rank == ll.rank && line_no > 0 && p.native) {
      // "terminate called after throwing an instance of 'T'" then "  what():  message";
      // "terminate called without an active exception" has no message.
      if (line_no != p.start_line) {
        if (Contains(c, "what():")) close(p, Ref(ll, c, t), true);
        else close(p, p.start, false);
        done = true;
      }
    } else if (p.rank == ll.rank && line_no > 0 && !line_taken) {
      std::string_view s = c;
      const bool indented = !s.empty() && (s[0] == ' ' || s[0] == '\t');
      const bool next_report = Contains(s, "Traceback (most recent call last)") || Contains(s, "terminate called") ||
                               Contains(s, "During handling of the above exception") ||
                               Contains(s, "The above exception was the direct cause");
      const bool framing = next_report || Contains(s, "^^^^") || CaretDebris(s) || Trim(s).empty();
      if (!indented && !framing) {
        if (LooksLikeException(s)) {
          close(p, Ref(ll, c, t), true);
          done = line_taken = true;
        } else if (p.fallback.line == 0) {
          // Debris, or an exception of an unusual shape: the first such line ends it unless
          // an exception-shaped one follows within a few lines.
          p.fallback = Ref(ll, c, t);
          p.fallback_cls = last_record_line == line_no ? last_record_cls : "";
          p.lookahead = kTracebackLookahead;
        }
      }
      if (!done && p.fallback.line != 0 && (next_report || --p.lookahead < 0)) {
        close(p, p.fallback, false);
        for (auto& [seq, rec] : tracebacks)
          if (seq == p.seq && rec.exception.line == p.fallback.line) rec.exception_cls = p.fallback_cls;
        done = true;
      }
    }
    if (!done && --p.budget <= 0) done = true;
    if (done) pending_tb.erase(pending_tb.begin() + static_cast<long>(i));
    else ++i;
  }
}

LogScanner::LogScanner(int64_t reference_time) : impl_(std::make_unique<Impl>(reference_time)) {}
LogScanner::~LogScanner() = default;
LogScanner::LogScanner(const LogScanner& o) : impl_(std::make_unique<Impl>(*o.impl_)) {}
LogScanner& LogScanner::operator=(const LogScanner& o) {
  if (this != &o) impl_ = std::make_unique<Impl>(*o.impl_);
  return *this;
}

LogScanner::LogScanner(LogScanner&&) noexcept = default;
LogScanner& LogScanner::operator=(LogScanner&&) noexcept = default;

size_t LogScanner::Feed(const char* data, size_t n, bool at_eof) {
  if (n == 0) return 0;
  return impl_->Feed(data, n, at_eof);
}

void LogScanner::FeedLongLinePiece(const char* data, size_t n) {
  if (n) impl_->LongPiece(data, n);
}

uint64_t LogScanner::offset() const { return impl_->offset; }

LogScanner LogScanner::Continuation(int64_t reference_time) {
  LogScanner s(reference_time);
  s.impl_->full_lines = 0;
  s.impl_->header = false;
  return s;
}

bool LogScanner::MergeFrom(const LogScanner& continuation) {
  if (impl_->OpenContext()) return false;
  impl_->Merge(*continuation.impl_);
  return true;
}

LogScan LogScanner::Result() const {
  LogScan out = impl_->scan;
  out.lines = impl_->line_no;
  for (size_t i = 0; i < impl_->rank_vec.size(); ++i)
    if (impl_->rank_seen[i]) out.ranks[static_cast<int>(i) - 1] = impl_->rank_vec[i];
  std::sort(out.steps.begin(), out.steps.end(),
            [](const StepRecord& a, const StepRecord& b) { return a.step < b.step; });
  std::sort(out.checkpoint_steps.begin(), out.checkpoint_steps.end());
  out.checkpoint_steps.erase(std::unique(out.checkpoint_steps.begin(), out.checkpoint_steps.end()),
                             out.checkpoint_steps.end());
  out.tracebacks.clear();
  for (const auto& [seq, rec] : impl_->tracebacks) out.tracebacks.push_back(rec);
  return out;
}

}  // namespace mt::tools
