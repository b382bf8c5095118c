// The log's own clock. Training logs carry time stamps in many layouts, often more than
// one per file (a launcher's `date` line, absl prefixes without a year, Python logging,
// PyTorch's `[W1125 10:00:00.123 …]`, journal lines, bare `HH:MM:SS`). FindStamp finds
// the first one near the start of a line; LogClock turns stamps into seconds since the
// epoch, filling a missing year or date from the last fully dated stamp before it (the
// anchor), so a log copied years later still reads on its own clock.
//
// Why not the file's mtime: a checked-out or copied log has an mtime unrelated to when it
// was written. The mtime is only the reference when the log has no dated stamp at all.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace mt::tools {

// What a stamp says; zero means "not in the stamp".
struct Stamp {
  int year = 0, month = 0, day = 0;      // year 0: not stated (absl, journal); month 0: time only
  int hour = 0, minute = 0, second = 0;
  int utc_offset = 0;                    // seconds east of UTC when the stamp names a zone
  const char* layout = "";               // "iso", "date", "absl", "journal", "time", …
};

// The first time stamp that starts within the first `window` bytes of `text` (after any
// rank or actor prefix the caller did not remove). Conservative: durations, uptimes
// (`[ 1843.43]`) and progress-bar clocks (`28:51<28:26`) are not stamps.
std::optional<Stamp> FindStamp(std::string_view text, size_t window = 96);

// Seconds since the epoch for a complete date and time.
int64_t StampSeconds(const Stamp& s);

// Resolves stamps in log order. `reference` is used for stamps without a year until the
// log has shown a dated one (then the latest dated stamp is the reference).
class LogClock {
 public:
  explicit LogClock(int64_t reference) : reference_(reference) {}
  // kNoTime-like INT64_MIN when the stamp cannot be placed (time only, nothing dated yet).
  int64_t Resolve(const Stamp& s);
  bool anchored() const { return anchored_; }
  bool year_inferred() const { return year_inferred_; }
  int64_t anchor() const { return anchor_; }

 private:
  int64_t reference_;
  int64_t anchor_ = INT64_MIN;
  bool anchored_ = false;        // a stamp with a full date has been seen
  bool year_inferred_ = false;   // some stamp lacked its year
};

}  // namespace mt::tools
