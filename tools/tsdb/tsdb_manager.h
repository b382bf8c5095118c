// The TSDB connection manager: gives a tool a Prometheus URL that answers for one job.
//
//  - A live job whose own Prometheus answers on the port printed in its log
//    ("[Prometheus] Started on port N") and serves exactly this job's TSDB directory
//    (checked through /api/v1/status/flags) is queried there. Never is a second
//    Prometheus started on a live TSDB directory.
//  - Otherwise a real `prometheus` is started on a private copy of the job's blocks
//    (Prometheus has no read-only mode and writes wal/, chunks_head/ and queries.active
//    into its data dir; the job directory must stay untouched), in a temp directory, on a
//    free loopback port, with 100y retention (retention counts from the newest block)
//    and a 15 min lookback. It is reused by later calls for the same job, stopped after an
//    idle timeout, when it is found dead it is started again, and every instance is
//    stopped when the manager is destroyed (at process exit for the default manager).
//    Children also get PR_SET_PDEATHSIG, so a crashed mt does not leave them behind.
//  - The copy is confined and bounded (base/workspace_files.h): only what lies inside the
//    job directory is copied (a block, `wal/` or `prometheus/` linking elsewhere is refused
//    with TsdbError kUnsafe, and nothing of the outside file is read or echoed), FIFOs and
//    devices are refused, and the copy is refused before anything is written (kTooLarge)
//    when its apparent size (sparse files count in full) exceeds max_copy_bytes or a chunk
//    segment exceeds what Prometheus ever writes. Holes stay holes in the copy.
//  - Every private copy is registered in base/temp_dirs.h from the moment it exists, so
//    it is removed on every exit path: the manager's destructor, exit() (atexit), SIGINT /
//    SIGTERM / SIGHUP / SIGQUIT when their disposition is the default (mt query, mt perf,
//    mt compare), and RemovePrivateTsdbCopies() for processes that handle signals
//    themselves (mt serve: call it from the signal path before _Exit).
#pragma once
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "tools/tsdb/tsdb_blocks.h"

namespace mt::tools {

struct TsdbManagerOptions {
  std::string prometheus_binary = "prometheus";    // a path, or a name looked up on PATH
  int port_first = 19600;                          // loopback ports tried, inclusive
  int port_last = 19699;
  std::chrono::milliseconds idle_timeout{std::chrono::minutes(10)};
  std::chrono::milliseconds ready_timeout{std::chrono::seconds(60)};
  std::filesystem::path temp_root;                 // empty: std::filesystem::temp_directory_path()
  std::string lookback_delta = "15m";
  // The private copy's limit, apparent size of the blocks (and wal/) copied.
  uint64_t max_copy_bytes = 8ull << 30;
  // Prometheus cuts chunk segment files at 512 MiB; a larger one is not its output.
  uint64_t max_chunk_segment_bytes = 512ull << 20;

  // Defaults overridden by MT_PROMETHEUS, MT_TSDB_PORTS ("19600-19699"),
  // MT_TSDB_IDLE_SECONDS and MT_TSDB_MAX_COPY_BYTES ("8G", "512M", bytes) when set.
  static TsdbManagerOptions FromEnvironment();
};

// The TSDB tree is confined to the directory that holds tsdb_dir (the job directory).
struct TsdbSource {
  std::filesystem::path tsdb_dir;     // <job dir>/prometheus
  bool job_running = false;           // triage says the job is still running (or hanging)
  std::optional<int> live_port;       // from the log's "[Prometheus] Started on port N"
};

// A lease on one Prometheus. While any lease of an instance exists, the idle reaper
// leaves it alone.
class TsdbLease {
 public:
  struct Shared;
  TsdbLease(std::shared_ptr<Shared> shared, std::string url, std::string source, TsdbLayout layout, pid_t pid,
            bool started, std::string note);
  ~TsdbLease();
  TsdbLease(TsdbLease&&) noexcept = default;
  TsdbLease(const TsdbLease&) = delete;
  TsdbLease& operator=(const TsdbLease&) = delete;

  const std::string& url() const { return url_; }
  const std::string& source() const { return source_; }   // "live" | "private copy"
  const TsdbLayout& layout() const { return layout_; }    // of the job's own directory
  pid_t pid() const { return pid_; }                      // 0 for a live job's Prometheus
  bool started() const { return started_; }               // this call started it
  const std::string& note() const { return note_; }       // e.g. "live job, blocks only"

 private:
  std::shared_ptr<Shared> shared_;
  std::string url_, source_;
  TsdbLayout layout_;
  pid_t pid_ = 0;
  bool started_ = false;
  std::string note_;
};

class TsdbManager {
 public:
  explicit TsdbManager(TsdbManagerOptions options = TsdbManagerOptions::FromEnvironment());
  ~TsdbManager();   // stops every Prometheus it started
  TsdbManager(const TsdbManager&) = delete;
  TsdbManager& operator=(const TsdbManager&) = delete;

  // Throws TsdbError (missing/empty/corrupt/unsafe TSDB, copy too large, no binary, no
  // free port, start failure).
  TsdbLease Acquire(const TsdbSource& source);
  // Stops the instance serving `tsdb_dir` (e.g. after it stopped answering mid-query) so
  // that the next Acquire starts a fresh one. No-op for live Prometheus servers.
  void Discard(const std::filesystem::path& tsdb_dir);
  // Stops every instance, including one being started right now (its Acquire throws
  // kStartFailed "stopped while starting" within ~20 ms of the call instead of holding
  // the manager until Prometheus is ready): safe on a shutdown path.
  void StopAll();
  // Instances currently running (tests, benchmarks).
  std::size_t running() const;

  const TsdbManagerOptions& options() const { return options_; }

 private:
  struct Instance;
  std::shared_ptr<Instance> Start(const std::filesystem::path& key, const TsdbLayout& layout, bool blocks_only);
  void StopLocked(const std::filesystem::path& key);
  void ReapLoop();

  TsdbManagerOptions options_;
  mutable std::mutex mu_;
  std::map<std::filesystem::path, std::shared_ptr<Instance>> instances_;
  int next_port_;
  bool stopping_ = false;
  std::atomic<int> abort_starts_{0};   // > 0 while StopAll / the destructor wants in
  std::condition_variable cv_;
  std::thread reaper_;
};

// The manager `mt serve` and `mt query` share: created on first use, destroyed (and its
// Prometheus servers stopped) at process exit.
TsdbManager& DefaultTsdbManager();

// "[Prometheus] Started on port 9190 ..." → 9190 (the last such line wins: restarts).
// Reads the first 32 MiB of a regular file only, lines cut at 64 KiB.
std::optional<int> LivePrometheusPort(const std::filesystem::path& log);

// Stops every Prometheus started on a private copy and removes every private copy
// ($TMPDIR/mt-tsdb-*) of this process, now. Async-signal-safe and lock-free: call it from
// a signal handler or a signal-waiting thread, even while a query is copying or starting
// (mt serve's shutdown path, before std::_Exit). The managers' state is not updated: call
// it only when the process is about to end.
void RemovePrivateTsdbCopies() noexcept;

}  // namespace mt::tools
