// What is on disk in a job's `prometheus/` directory: the ULID block directories (each
// with a meta.json giving minTime/maxTime in ms), a `wal/` of not-yet-compacted samples,
// and files that belong to a running Prometheus (`lock`, `chunks_head/`, `queries.active`).
// The data's time range comes from the blocks' meta.json: /api/v1/status/tsdb only
// describes the head block.
//
// The tree is input from whoever can write the job directory, so it is read through
// base/workspace_files.h: confined to the job directory (a `prometheus/`, block or `wal/`
// that links outside it is refused, never followed), meta.json read only when it is a
// regular file of at most kMaxMetaBytes (a FIFO, a device or a link to /dev/zero is an
// error, not a hang or an endless read), and its time range checked against kMinSaneMs …
// kMaxSaneMs so that a forged block is named as corrupt instead of skewing every default
// window (and `now`) derived from it.
#pragma once
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace mt::tools {

class TsdbError : public std::runtime_error {
 public:
  // kUnsafe: the tree holds what mt refuses to read (a link out of the job directory, a
  // FIFO or device inside a block); kTooLarge: the private copy would exceed its limit.
  enum class Code { kMissing, kEmpty, kCorrupt, kNoBinary, kStartFailed, kNoPort, kLive, kUnsafe, kTooLarge };
  TsdbError(Code code, const std::string& what) : std::runtime_error(what), code_(code) {}
  Code code() const { return code_; }

 private:
  Code code_;
};

inline constexpr uint64_t kMaxMetaBytes = 1 << 20;        // real ones are a few KiB
inline constexpr int64_t kMinSaneMs = 946684800000;        // 2000-01-01T00:00:00Z
inline constexpr int64_t kMaxSaneMs = 4102444800000;       // 2100-01-01T00:00:00Z

struct TsdbBlock {
  std::string ulid;
  std::filesystem::path real_dir;   // the block directory, symlinks resolved (inside the root)
  int64_t min_ms = 0;   // inclusive
  int64_t max_ms = 0;   // exclusive
  int64_t samples = 0;
  int64_t series = 0;
};

struct TsdbLayout {
  std::filesystem::path dir;
  std::filesystem::path root;         // what the tree is confined to (canonical)
  std::filesystem::path real_dir;     // `dir`, symlinks resolved
  std::vector<TsdbBlock> blocks;      // sorted by min_ms
  bool has_wal = false;               // wal/ with at least one non-empty segment
  int64_t min_ms = 0, max_ms = 0;     // union of the blocks (0/0 when only a wal exists)
};

// Reads `dir`, confined to `root` (by default the directory that holds `dir`: a job's
// TSDB lives inside its job directory). Throws TsdbError: kMissing (no such directory),
// kEmpty (no block and no wal: "diagnose the observability stack from the [Prometheus]
// lines of the job log"), kCorrupt (a block's meta.json missing, not a regular file, over
// 1 MiB, not JSON, or with a time range outside 2000–2100 or empty), kUnsafe (the
// directory, a block or wal/ leads outside `root`, or is a link loop).
TsdbLayout ReadTsdbLayout(const std::filesystem::path& dir);
TsdbLayout ReadTsdbLayout(const std::filesystem::path& dir, const std::filesystem::path& root);

}  // namespace mt::tools
