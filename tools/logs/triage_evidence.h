// What triage reads and what it proves: the job's scanned files (main log, rank logs, Ray
// worker logs) and, from their signatures, the candidate classes with their evidence.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tools/logs/scan_cache.h"
#include "tools/logs/triage_root_cause.h"
#include "tools/logs/workspace.h"

namespace mt::tools {

struct FileScanView {
  std::string display;   // workspace-relative name used in evidence
  ScanHandle handle;
  const LogScan& scan() const { return handle.data->scan; }
  int64_t mtime() const { return handle.data->mtime_ns / 1000000000; }
};

// The job's files as scanned. Not copyable: `steps` and `all` point into it.
struct JobViews {
  FileScanView primary;
  std::vector<FileScanView> extras;            // rank logs, Ray worker logs (unreadable ones skipped)
  const FileScanView* steps = nullptr;         // the file whose steps count (see OpenJobViews)
  std::vector<const FileScanView*> all;        // primary first
  JobViews() = default;
  JobViews(const JobViews&) = delete;
  JobViews& operator=(const JobViews&) = delete;
};

// Scans the job's logs through `cache`. Steps come from the main log unless a side log (a
// Ray worker's, authoritative when the Slurm log was truncated) got further.
void OpenJobViews(const JobFiles& job, ScanCache& cache, JobViews* out);

// Classes that never end a job by themselves.
bool NonFatal(const std::string& cls);

struct CandidateScan {
  Candidates cands;
  int64_t first_terminal_time = kNoTime;   // earliest stamped fatal evidence that ended the job
  bool summary_cancel = false;             // JOB SUMMARY FAILED with 130/143
  bool clean_cancel_exits = false;         // every NODE_EXIT was 130/143
};

// Every class the files' signatures prove, whether it ended the job (no steps after it),
// tracebacks folded into the class their lines carry, and — when nothing else ended the
// job — the exception or SIGKILL among the log's last lines.
CandidateScan CollectCandidates(const JobViews& views);

void AddCandidate(Candidates* cands, const std::string& cls, const Ev& ev);

// Whether a terminal candidate other than cancellation or a node exit is present.
bool FatalPresent(const Candidates& cands);

}  // namespace mt::tools
