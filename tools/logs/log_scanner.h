// The log scanner: one streaming pass over a training job log that extracts everything
// triage needs, with line numbers, in bounded memory.
//
// Speed: bytes are read in large blocks and searched with LiteralSet (a multi-literal
// skip search); only lines that contain a literal of log_signatures.h are split into
// prefixes and parsed, and RE2 runs only on those few. Newlines are counted with SIMD so
// every finding carries its line number.
//
// Memory is bounded whatever the input: per logical step one small record (up to
// kMaxSteps), per signature kind a count plus its first and last few occurrences, per
// rank a few counters. A 50 MB line is read in pieces and only its first 64 KiB is looked
// at.
//
// Scanning is resumable: LogScanner keeps its position, so a log that grew is scanned
// from where the last pass stopped (see ScanCache).
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tools/logs/log_line.h"

namespace mt::tools {

// A line worth citing: where it is and what it says (truncated to kMaxEvidenceText).
struct LineRef {
  uint64_t line = 0;          // 1-based
  int rank = -1;              // srun task id, -1 when the line has none
  int64_t time = kNoTime;     // seconds since the epoch, when the line is time-stamped
  std::string text;           // content after the prefixes, ANSI codes removed
};

// One logical training step, aggregated over the ranks that reported it.
struct StepRecord {
  int64_t step = 0;
  uint32_t entries = 0;       // step lines seen (one per rank in srun -l logs)
  int rank = -1;              // rank of the representative values below (the lowest seen)
  double seconds = 0;         // of the representative rank
  double tgs_sum = 0;         // Tokens/s/device summed over entries that had it
  uint32_t tgs_n = 0;
  float tflops = -1;          // representative; -1 when absent
  float mfu = -1;             // percent; -1 when absent
  float loss = -1;            // -1 when absent; NaN when the log says nan
  uint64_t first_line = 0;
  uint64_t last_line = 0;
  int64_t first_time = kNoTime;   // earliest time stamp among its lines
  int64_t last_time = kNoTime;
  double tgs() const { return tgs_n ? tgs_sum / tgs_n : -1; }
};

struct RankRecord {
  int64_t last_step = -1;
  uint64_t last_step_line = 0;
  int64_t last_step_time = kNoTime;
  uint64_t step_lines = 0;
  double seconds_sum = 0;     // sum of `seconds:` over this rank's step lines
  bool reached_barrier = false;
  uint64_t own_death_line = 0;    // a coordination-service termination it logged itself
  int64_t own_death_time = kNoTime;
  uint64_t last_line = 0;         // last candidate line seen from this rank
};

struct SignatureHits {
  std::string cls;            // triage class it proves
  uint64_t count = 0;
  std::vector<LineRef> first; // up to kKeepOccurrences, in order
  std::vector<LineRef> last;  // the most recent kKeepOccurrences (may overlap `first`)
};

struct StageEvent {
  std::string stage;          // "Preflight", "Docker pull", "ECC check", "Training"
  std::string event;          // BEGIN | END | TIMEOUT | FAILED
  std::optional<int> exit_code;
  std::optional<double> elapsed_seconds;
  std::optional<double> timeout_seconds;   // BEGIN (timeout=N) / TIMEOUT (E/T)
  uint64_t line = 0;
};

struct JobSummary {
  bool present = false;
  uint64_t line = 0;          // the "JOB SUMMARY" banner
  std::string job, model, wall;
  std::optional<int> nodes;
  std::optional<int64_t> wall_seconds;
  std::string status;         // SUCCESS | FAILED
  std::optional<int> exit_code;
  std::string reason;         // text after the dash, e.g. "Training FAILED (exit=1)"
  uint64_t status_line = 0;
};

struct NodeExit {
  std::string host;
  int exit_code = 0;
  LineRef ref;
};

struct HeartbeatReport {
  LineRef ref;                // the "stopped sending heartbeats" line
  std::vector<int> tasks;     // accused task ids listed after it
};

struct TracebackRecord {
  LineRef start;              // "Traceback (most recent call last):" or "terminate called …"
  LineRef exception;          // the final "SomeError: message" line, C++'s "what(): message"
                              // (line 0 if unseen)
  std::string exception_cls;  // a class its own words prove (NCCL error, OOM…), else ""
  bool native = false;        // C++'s uncaught-exception report (the process then aborts)
};

struct SlurmEnd {
  LineRef ref;
  std::string reason;         // "TIME LIMIT", "PREEMPTION", "NODE FAILURE", "" (scancel)
  int64_t time = kNoTime;     // CANCELLED AT <time>
};

// A launcher's own end line ("Job end: … (exit code 1)", "XPK End: …", "EXIT_CODE=0").
struct JobEnd {
  LineRef ref;
  std::optional<int> exit_code;
};

struct InitWave {             // a burst of RCCL communicator initialisations
  uint64_t first_line = 0, last_line = 0;
  uint64_t lines = 0;
  int64_t after_step = -1;    // last completed step before the wave (-1: before training)
};

struct LogScan {
  // Input and coverage.
  uint64_t bytes = 0;         // bytes scanned
  uint64_t lines = 0;         // lines seen (a final line without '\n' counts)
  uint64_t oversized_lines = 0;
  bool steps_truncated = false;   // more than kMaxSteps distinct steps: later ones dropped

  std::map<std::string, std::string> header;        // KEY=value lines near the top
  std::map<std::string, std::string> config;        // Config param name -> value (first)
  std::map<std::string, double> stage_timeouts;     // the STAGE TIMEOUTS table
  std::vector<StageEvent> stages;
  JobSummary summary;
  std::vector<NodeExit> node_exits;
  std::map<int, int> task_exit_codes;               // srun: task N: Exited with exit code C
  std::vector<StepRecord> steps;                    // sorted by step after Finish()
  uint64_t step_lines = 0;
  std::string step_format;                          // "maxtext" or a progress_formats.h name
  int64_t step_total = -1;                          // the run's step count when step lines state it
  std::map<int, RankRecord> ranks;
  std::map<std::string, SignatureHits> signatures;  // by kind
  std::vector<HeartbeatReport> heartbeats;
  std::optional<int64_t> heartbeat_timeout_seconds;
  std::vector<TracebackRecord> tracebacks;
  uint64_t tracebacks_total = 0;
  std::vector<SlurmEnd> slurm_ends;
  std::vector<JobEnd> job_ends;
  std::optional<LineRef> training_end;              // "Training finished", "Training completed"
  std::vector<InitWave> init_waves;
  std::optional<LineRef> memstats;                  // first "Memstats:" line
  std::vector<std::string> memstats_lines;          // its "Using (GB)" lines
  std::optional<LineRef> barrier;                   // first "Synchronizing hosts…"
  std::vector<int64_t> checkpoint_steps;            // "Saved a checkpoint at step N" (distinct)
  std::optional<int64_t> restored_step;             // "restoring … step N"
  bool single_replica_restore = false;
  bool uses_ray = false;
  std::optional<int> prometheus_port;
  uint64_t benign_lines = 0;                        // candidate lines recognised as harmless
  int64_t first_time = kNoTime, last_time = kNoTime;   // over time-stamped candidate lines
  uint64_t first_time_line = 0;                        // where the earliest stamp is
  uint64_t last_line_with_time = 0;
  // The log's own clock (log_clock.h): the last time-stamped line of the whole log, the
  // layout of its stamps and whether a year had to be inferred.
  int64_t tail_time = kNoTime;
  uint64_t tail_time_line = 0;
  std::string clock_layout;                         // "" when no line had a stamp
  bool clock_year_inferred = false;
  bool clock_anchored = false;                      // some stamp carried its full date
  std::vector<LineRef> tail;                        // the last non-empty lines (up to 12)

  const StepRecord* FindStep(int64_t step) const;
};

inline constexpr size_t kMaxSteps = 400000;
inline constexpr size_t kMaxLineExamined = 64 * 1024;   // a longer line is read up to here
inline constexpr size_t kKeepOccurrences = 3;
inline constexpr size_t kMaxEvidenceText = 400;

class LogScanner {
 public:
  // `reference_time` resolves the year of absl time stamps (use the file's mtime).
  explicit LogScanner(int64_t reference_time);
  ~LogScanner();
  LogScanner(const LogScanner&);
  LogScanner& operator=(const LogScanner&);
  LogScanner(LogScanner&&) noexcept;
  LogScanner& operator=(LogScanner&&) noexcept;

  // Scans bytes that follow everything fed so far. Returns how many bytes were consumed;
  // the caller keeps the rest (an unfinished last line) and offers it again with more
  // bytes. With `at_eof`, everything is consumed. When the unconsumed rest is a single
  // line longer than the caller's buffer, call FeedLongLinePiece instead.
  size_t Feed(const char* data, size_t n, bool at_eof);
  // A piece of a line too long to buffer (no '\n' in it).
  void FeedLongLinePiece(const char* data, size_t n);

  // The result so far, finalised (steps sorted). Feeding may continue afterwards.
  LogScan Result() const;
  uint64_t offset() const;     // bytes consumed so far

  // Parallel scanning: a scanner for the bytes that follow some line boundary of a log
  // (no header there), and the merge of such a scanner into the one that scanned the
  // bytes just before it. A merge is refused (false, nothing changed) when this scanner
  // ended inside a multi-line context (a traceback, a JOB SUMMARY, a heartbeat task
  // list, an RCCL init wave…) that the continuation could not see; scan those bytes
  // serially instead.
  static LogScanner Continuation(int64_t reference_time);
  bool MergeFrom(const LogScanner& continuation);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Scans a whole regular file (or, when `resume` is given, the bytes after its offset).
// Throws std::runtime_error with a specific message for unreadable or non-regular files.
struct FileScan {
  LogScan scan;
  LogScanner state;            // resumable, positioned after the last complete line
  uint64_t size = 0;           // file size when the scan started
  int64_t mtime_ns = 0;
  uint64_t inode = 0, device = 0;
  bool changed_during_read = false;   // the file grew or shrank while being read
};
// Fresh scans of files larger than `parallel_from` bytes split the file in two at a line
// boundary and scan the halves on two threads (2 cores: about twice as fast).
inline constexpr uint64_t kParallelScanFrom = 96ull << 20;
FileScan ScanFile(const std::filesystem::path& path, const LogScanner* resume = nullptr,
                  uint64_t parallel_from = kParallelScanFrom);

// Counts '\n' bytes (SIMD when available).
uint64_t CountNewlines(const char* data, size_t n);

}  // namespace mt::tools
