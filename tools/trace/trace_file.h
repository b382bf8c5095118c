// One profiler trace as read from disk, compact enough to hold a million-event file: every
// string (names, categories, process/thread keys) is interned once, and each complete
// ("X") event keeps only what the analyses use. The reader (chrome_trace_reader.h) fills
// it; trace_analysis.h turns it into figures. Times are the trace's own microseconds.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mt::tools::trace {

// `s` with every byte that is not part of a valid UTF-8 sequence replaced by '?'.
std::string ValidUtf8(std::string_view s);

// Interned strings: id 0 is the empty string. Every string is stored as valid UTF-8 (a
// byte that is not is replaced by '?'), so analyses can always be written out as JSON.
class StringPool {
 public:
  StringPool() { Intern(""); }
  uint32_t Intern(std::string_view s);
  const std::string& operator[](uint32_t id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> ids_;
  std::vector<std::string> strings_;
};

// A key that JSON values compare by, as Python's `==` would for the values traces carry:
// integral numbers by value (5 and 5.0 agree), strings by content, anything else absent.
using ValueKey = std::optional<int64_t>;

// The collective-size fields of an event's args (kept only for events that carry one).
struct CommArgs {
  std::optional<double> in_msg_nelems, out_msg_nelems;
  uint32_t dtype = 0;                    // string id, 0: absent
  std::optional<int64_t> group_size;
  uint32_t collective_name = 0;          // string id, 0: absent
  std::optional<std::vector<int64_t>> input_dims0;  // the first "Input Dims" entry, when all ints
  bool input_dims0_present = false;      // a first entry exists (even an unusable one)
  uint32_t input_type0 = 0;              // string id of the first "Input type", 0: absent
};

struct TraceEvent {
  double ts = 0, dur = 0;                // µs
  uint32_t index = 0;                    // position among the file's events (ties, "first wins")
  uint32_t name = 0;                     // StringPool id
  uint32_t cat = 0;                      // StringPool id of the category as written, 0: none
  uint32_t pid = 0, tid = 0;             // StringPool ids of the keys ("i:3", "s:CPU functions")
  int32_t comm_args = -1;                // index into TraceFile::comm_args, -1: none
  ValueKey correlation, external_id;
  double end() const { return ts + dur; }
};

struct DistributedInfo {
  std::optional<int64_t> rank, world_size;
  std::string backend;
};

struct TraceFile {
  enum class Format { kKineto, kLegacy, kXPlane };
  Format format = Format::kKineto;
  StringPool strings;
  std::vector<TraceEvent> events;        // valid complete events, file order
  std::vector<CommArgs> comm_args;
  // Flow events (ph s/f/t with an id): (pid, tid, ts) → the first id seen there.
  std::map<std::tuple<uint32_t, uint32_t, double>, int64_t> flows;
  // Counts over every event object: by category as written ("(none)" when absent), by ph.
  std::map<std::string, int64_t> by_cat, by_ph;
  int64_t total = 0, bad_x = 0;
  std::optional<DistributedInfo> distributed;
  int64_t device_properties = 0;
  std::string display_time_unit;
  bool has_base_time_ns = false;
};

}  // namespace mt::tools::trace
