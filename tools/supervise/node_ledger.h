// Every time a host was implicated in a failure, across jobs: <workspace>/.mt/nodes.jsonl,
// one JSON object per line, appended (never rewritten), so that a repeat offender is seen
// even when each of its jobs blamed it only once. A clean job on a host releases it.
//
//   {"time": 1772000000, "host": "gpu-07", "job": "8311", "event": "implicated",
//    "class": "gpu_hw_error", "evidence": "XID 79 on GPU 3", "source": "triage"}
//   {"time": 1772090000, "host": "gpu-07", "job": "8320", "event": "clean"}
//
// The repeat-offender rule: a host is excluded once it was implicated `k` times within
// `window` seconds and has had no clean job since the last of them; `submit_job`, sweeps
// and restarts keep it off with `--exclude`.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"

namespace mt::tools {

struct LedgerEntry {
  int64_t time = 0;
  std::string host, job, event;   // event: implicated | clean
  std::string cls, evidence, source;
};

struct OffenderRule {
  int k = 2;                       // implications that exclude a host
  int64_t window_s = 7 * 86400;    // counted over this long before now
};

struct NodeStanding {
  std::string host;
  int implications = 0;            // within the window, since the last clean job
  int64_t last_time = 0;           // of the last implication
  std::string last_class, last_job;
  bool excluded = false;
};

class NodeLedger {
 public:
  explicit NodeLedger(std::filesystem::path file) : file_(std::move(file)) {}
  // <workspace>/.mt/nodes.jsonl
  static NodeLedger ForWorkspace(const std::filesystem::path& workspace);

  // Appends one line per entry (one write, under an exclusive lock: concurrent writers
  // never interleave). A host name must be a plain host name.
  base::Status Append(const std::vector<LedgerEntry>& entries) const;
  // Every entry; a line that is not a ledger entry is skipped and counted in `*skipped`.
  base::Status Read(std::vector<LedgerEntry>* out, int* skipped = nullptr) const;

  // Each host implicated within the window (or released since), worst first, as of `now`.
  base::Status Standings(const OffenderRule& rule, int64_t now, std::vector<NodeStanding>* out) const;
  // The hosts the rule excludes now, sorted.
  base::Status Excluded(const OffenderRule& rule, int64_t now, std::vector<std::string>* out) const;

  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path file_;
};

// Standings from entries (oldest first as appended; order is not assumed).
std::vector<NodeStanding> StandingsOf(std::vector<LedgerEntry> entries, const OffenderRule& rule, int64_t now);

}  // namespace mt::tools
