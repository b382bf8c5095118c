// read_log's core: a bounded window of a (possibly multi-GB) log — by line range, by srun
// task, by regular expression with context — so nobody needs `cat` on a 2 GB file.
// Streams the file in 1 MiB blocks; memory is bounded by the output budget.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "mcp/json.h"

namespace mt::tools {

struct WindowRequest {
  // Line range "A:B" (1-based, inclusive), "A:", ":B", "-N:" (last N lines); empty = from
  // the start (or the whole file with `grep`).
  std::string lines;
  std::optional<int> rank;          // keep only lines of this srun task
  std::string grep;                 // RE2; empty = no filter
  int context = 0;                  // lines of context around each match (0..20)
  size_t max_lines = 50;            // lines returned at most
  size_t max_line_chars = 240;      // longer lines are cut (with a marker)
  size_t max_total_chars = 7000;    // output budget; the window stops when reached
};

struct WindowLine {
  uint64_t line = 0;
  int rank = -1;
  bool match = false;               // matched `grep` (false for context lines)
  std::string text;
};

struct Window {
  std::vector<WindowLine> lines;
  uint64_t first_line = 0, last_line = 0;   // range actually examined
  std::optional<uint64_t> total_lines;      // known when the whole file was read
  uint64_t matches = 0;                     // grep matches seen (may exceed those returned)
  bool truncated = false;                   // more lines would have qualified
  std::string resume;                       // "lines" value that continues after this window
};

// Throws std::invalid_argument for a malformed request (bad range, bad regex) and
// std::runtime_error when the file cannot be read.
Window ReadWindow(const std::filesystem::path& file, const WindowRequest& request);

}  // namespace mt::tools
