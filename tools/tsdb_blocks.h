// What is on disk in a job's `prometheus/` directory: the ULID block directories (each
// with a meta.json giving minTime/maxTime in ms), a `wal/` of not-yet-compacted samples,
// and files that belong to a running Prometheus (`lock`, `chunks_head/`, `queries.active`).
// The data's time range comes from the blocks' meta.json: /api/v1/status/tsdb only
// describes the head block.
#pragma once
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace mt::tools {

class TsdbError : public std::runtime_error {
 public:
  enum class Code { kMissing, kEmpty, kCorrupt, kNoBinary, kStartFailed, kNoPort, kLive };
  TsdbError(Code code, const std::string& what) : std::runtime_error(what), code_(code) {}
  Code code() const { return code_; }

 private:
  Code code_;
};

struct TsdbBlock {
  std::string ulid;
  int64_t min_ms = 0;   // inclusive
  int64_t max_ms = 0;   // exclusive
  int64_t samples = 0;
  int64_t series = 0;
};

struct TsdbLayout {
  std::filesystem::path dir;
  std::vector<TsdbBlock> blocks;      // sorted by min_ms
  bool has_wal = false;               // wal/ with at least one non-empty segment
  int64_t min_ms = 0, max_ms = 0;     // union of the blocks (0/0 when only a wal exists)
};

// Reads `dir`. Throws TsdbError: kMissing (no such directory), kEmpty (no block and no
// wal: "diagnose the observability stack from the [Prometheus] lines of the job log"),
// kCorrupt (a block's meta.json unreadable, not JSON, or without a sane time range).
TsdbLayout ReadTsdbLayout(const std::filesystem::path& dir);

}  // namespace mt::tools
