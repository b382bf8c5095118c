// One line of a training job log, seen through its prefixes. Lines arrive as
//   [srun -l task label "  8: "] [absl "I0224 19:21:00.123456 140 file.py:12] "
//                                 | ISO "2026-02-24 19:21:00,123 " | "[2026-02-24T19:21:00Z] "]
//   content [\r]
// possibly with ANSI colour codes anywhere. SplitLogLine peels the prefixes off without
// copying; StripAnsi is only needed for the few lines whose content is parsed.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace mt::tools {

inline constexpr int64_t kNoTime = INT64_MIN;

struct LogLine {
  int rank = -1;                 // srun -l task id, -1 when absent
  std::string_view content;      // text after the prefixes, without a trailing '\r'
  // Time stamp of the line. absl prefixes carry no year: `month`..`second` are filled
  // and `year` is 0 until the caller resolves it (see ResolveAbslYear).
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  bool has_time = false;
  int utc_offset = 0;            // seconds east of UTC, for ISO stamps with a zone
  char severity = 0;             // absl I/W/E/F, 0 otherwise
};

// `line` excludes the '\n'.
LogLine SplitLogLine(std::string_view line);

// Seconds since the epoch for a line's time stamp. absl stamps get the year for which
// the stamp is not after `reference` + 1 day (so a log written across New Year resolves
// correctly against the file's mtime). kNoTime when the line has none.
int64_t LineTime(const LogLine& line, int64_t reference);

// Copies `text` without ANSI escape sequences (CSI "\x1b[...<final>" and lone ESC).
std::string StripAnsi(std::string_view text);
bool HasAnsi(std::string_view text);

// Trims ASCII blanks on both ends.
std::string_view Trim(std::string_view text);

}  // namespace mt::tools
