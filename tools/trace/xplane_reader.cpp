#include "tools/trace/xplane_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "tools/trace/protobuf_wire.h"

namespace mt::tools::trace {
namespace {

// The file's bytes, read into memory (not mapped: a file truncated while it is read would
// kill the process with SIGBUS).
base::Status ReadAll(const std::string& path, uint64_t max_bytes, std::vector<uint8_t>* out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return base::StatusOfErrno(errno, path);
  struct stat st {};
  base::Status result = base::Status::Ok();
  if (fstat(fd, &st) != 0) {
    result = base::StatusOfErrno(errno, path);
  } else if (!S_ISREG(st.st_mode)) {
    result = base::Status(base::Errc::kNotRegular, path + " is not a regular file");
  } else if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    result = base::Status(base::Errc::kTooLarge, path + " is " + std::to_string(st.st_size) + " bytes, over the reader's cap of " +
                                                     std::to_string(max_bytes));
  } else {
    out->resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < out->size()) {
      ssize_t n = read(fd, out->data() + got, out->size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        result = base::StatusOfErrno(errno, path);
        break;
      }
      if (n == 0) break;   // shrank while read: parse what there is
      got += static_cast<size_t>(n);
    }
    out->resize(got);
  }
  close(fd);
  return result;
}

struct RawEvent {
  int64_t metadata_id = 0, offset_ps = 0, duration_ps = 0;
  std::string_view hlo_op;          // the hlo_op stat (a string or a reference to one)
  std::optional<int64_t> correlation, step_num;
};

struct RawLine {
  int64_t id = 0, timestamp_ns = 0;
  std::string_view name;
  std::vector<RawEvent> events;
};

bool IsDerivedLine(std::string_view n) {
  for (std::string_view d : {"XLA Ops", "XLA Modules", "Steps", "Framework Name Scope", "Framework Ops", "Source code",
                             "XLA TraceMe", "Launch Stats", "TensorFlow Name Scope", "TensorFlow Ops", "Async XLA Ops"})
    if (n == d) return true;
  return false;
}

// "all-reduce-start.12" → "allreduce"; "" for an op that is no collective.
std::string CollectiveOfHloOp(std::string_view op) {
  std::string letters;
  for (char c : op) {
    if (c == '.') break;
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (l >= 'a' && l <= 'z') letters += l;
  }
  for (std::string_view k : {"allreduce", "allgather", "reducescatter", "alltoall", "collectivepermute", "collectivebroadcast"})
    if (letters.rfind(k, 0) == 0) return std::string(k);
  return "";
}

class PlaneReader {
 public:
  PlaneReader(WireCursor plane, const XPlaneLimits& limits, int64_t* events_so_far)
      : plane_(plane), limits_(limits), events_so_far_(events_so_far) {}

  std::string error;
  std::string name;

  bool ReadHeaderAndMetadata() {
    uint32_t f = 0, wt = 0;
    while (plane_.Next(&f, &wt)) {
      WireCursor inner(nullptr, 0);
      if (f == 2 && wt == 2) {
        std::string_view s;
        if (!plane_.String(&s)) break;
        name = ValidUtf8(s);
      } else if (f == 3 && wt == 2) {
        if (!plane_.Bytes(&inner)) break;
        lines_.push_back(inner);
      } else if ((f == 4 || f == 5) && wt == 2) {
        if (!plane_.Bytes(&inner) || !MapEntry(inner, f == 4 ? event_names_ : stat_names_)) break;
      } else if (!plane_.Skip(wt)) {
        break;
      }
    }
    return Check(plane_);
  }

  // Every line of the plane with its events, stats resolved.
  bool ReadLines(std::vector<RawLine>* lines) {
    for (WireCursor& c : lines_) {
      RawLine l;
      if (!Line(c, &l)) return false;
      lines->push_back(std::move(l));
    }
    return true;
  }

  std::string EventNameOf(int64_t id) const { return std::string(EventName(id)); }

 private:
  std::string_view EventName(int64_t id) const {
    auto it = event_names_.find(id);
    return it == event_names_.end() ? std::string_view() : it->second;
  }

  // A map<int64, X{Event,Stat}Metadata> entry: key 1, value 2 (whose field 2 is the name).
  bool MapEntry(WireCursor c, std::map<int64_t, std::string>& names) {
    uint32_t f = 0, wt = 0;
    uint64_t key = 0;
    std::string_view n;
    while (c.Next(&f, &wt)) {
      if (f == 1 && wt == 0) {
        if (!c.Varint(&key)) break;
      } else if (f == 2 && wt == 2) {
        WireCursor meta(nullptr, 0);
        if (!c.Bytes(&meta)) break;
        uint32_t mf = 0, mwt = 0;
        while (meta.Next(&mf, &mwt)) {
          if (mf == 2 && mwt == 2) {
            if (!meta.String(&n)) break;
          } else if (!meta.Skip(mwt)) {
            break;
          }
        }
        if (!Check(meta)) return false;
      } else if (!c.Skip(wt)) {
        break;
      }
    }
    if (!Check(c)) return false;
    names[static_cast<int64_t>(key)] = ValidUtf8(n);
    return true;
  }

  bool Line(WireCursor c, RawLine* l) {
    uint32_t f = 0, wt = 0;
    uint64_t v = 0;
    while (c.Next(&f, &wt)) {
      WireCursor inner(nullptr, 0);
      if (f == 1 && wt == 0) {
        if (!c.Varint(&v)) break;
        l->id = static_cast<int64_t>(v);
      } else if (f == 2 && wt == 2) {
        if (!c.String(&l->name)) break;
      } else if (f == 3 && wt == 0) {
        if (!c.Varint(&v)) break;
        l->timestamp_ns = static_cast<int64_t>(v);
      } else if (f == 4 && wt == 2) {
        if (!c.Bytes(&inner)) break;
        RawEvent e;
        if (!Event(inner, &e)) return false;
        if (++*events_so_far_ > limits_.max_events) {
          error = "more than " + std::to_string(limits_.max_events) + " events (the reader's cap)";
          too_large = true;
          return false;
        }
        l->events.push_back(e);
      } else if (!c.Skip(wt)) {
        break;
      }
    }
    return Check(c);
  }

  bool Event(WireCursor c, RawEvent* e) {
    uint32_t f = 0, wt = 0;
    uint64_t v = 0;
    while (c.Next(&f, &wt)) {
      WireCursor inner(nullptr, 0);
      if (wt == 0 && (f == 1 || f == 2 || f == 3)) {
        if (!c.Varint(&v)) break;
        int64_t s = static_cast<int64_t>(v);
        (f == 1 ? e->metadata_id : f == 2 ? e->offset_ps : e->duration_ps) = s;
      } else if (f == 4 && wt == 2) {
        if (!c.Bytes(&inner) || !Stat(inner, e)) break;
      } else if (!c.Skip(wt)) {
        break;
      }
    }
    return Check(c);
  }

  // An XStat: the two the analyses use are hlo_op (str_value 5 or ref_value 7) and
  // correlation_id (an integer).
  bool Stat(WireCursor c, RawEvent* e) {
    uint32_t f = 0, wt = 0;
    uint64_t v = 0, meta = 0;
    std::string_view str;
    std::optional<uint64_t> num, ref;
    while (c.Next(&f, &wt)) {
      if (f == 1 && wt == 0) {
        if (!c.Varint(&meta)) break;
      } else if ((f == 3 || f == 4) && wt == 0) {
        if (!c.Varint(&v)) break;
        num = v;
      } else if (f == 7 && wt == 0) {
        if (!c.Varint(&v)) break;
        ref = v;
      } else if (f == 5 && wt == 2) {
        if (!c.String(&str)) break;
      } else if (!c.Skip(wt)) {
        break;
      }
    }
    if (!Check(c)) return false;
    auto it = stat_names_.find(static_cast<int64_t>(meta));
    if (it == stat_names_.end()) return true;
    if (it->second == "hlo_op") {
      if (ref) {
        auto r = stat_names_.find(static_cast<int64_t>(*ref));
        if (r != stat_names_.end()) str = r->second;
      }
      e->hlo_op = str;
    } else if (it->second == "correlation_id" && num) {
      e->correlation = static_cast<int64_t>(*num);
    } else if (it->second == "step_num" && num) {
      e->step_num = static_cast<int64_t>(*num);
    }
    return true;
  }

  bool Check(const WireCursor& c) {
    if (c.failed() && error.empty()) error = c.error();
    return error.empty();
  }

 public:
  bool too_large = false;

 private:
  WireCursor plane_;
  const XPlaneLimits& limits_;
  int64_t* events_so_far_;
  std::vector<WireCursor> lines_;
  std::map<int64_t, std::string> event_names_, stat_names_;
};

std::optional<int64_t> DeviceOrdinal(const std::string& plane) {
  for (std::string_view prefix : {"/device:GPU:", "/device:TPU:"}) {
    if (plane.rfind(prefix, 0) != 0) continue;
    std::string rest = plane.substr(prefix.size());
    size_t n = 0;
    while (n < rest.size() && n < 9 && rest[n] >= '0' && rest[n] <= '9') ++n;
    if (n > 0) return std::stoll(rest.substr(0, n));
  }
  return std::nullopt;
}

struct RawPlane {
  std::unique_ptr<PlaneReader> reader;
  std::vector<RawLine> lines;
};

std::string ModuleName(std::string_view n) {
  size_t p = n.find('(');
  return std::string(p == std::string_view::npos ? n : n.substr(0, p));
}

// Host-side marks every device shares: step spans (events with a step_num stat, as
// jax.profiler.StepTraceAnnotation("train", step_num=N) writes) and kernel launches
// (events with a correlation_id).
struct HostMark {
  const RawLine* line;
  const RawEvent* event;
  const RawPlane* plane;
};

class DeviceTraceBuilder {
 public:
  DeviceTraceBuilder(int64_t base_ns, TraceFile* out) : base_ns_(base_ns), out_(out) {}

  double Us(const RawLine& l, int64_t offset_ps) const {
    // In double: a hostile file's time stamps may be anything, and their difference must not overflow.
    return (static_cast<double>(l.timestamp_ns) - static_cast<double>(base_ns_)) / 1e3 + static_cast<double>(offset_ps) / 1e6;
  }

  void Add(const RawLine& l, const RawEvent& e, std::string_view name, std::string_view cat, const std::string& pid,
           uint32_t comm_kind = 0) {
    ++out_->total;
    if (e.duration_ps < 0) {
      ++out_->bad_x;
      return;
    }
    TraceEvent t;
    t.ts = Us(l, e.offset_ps);
    t.dur = static_cast<double>(e.duration_ps) / 1e6;
    t.index = static_cast<uint32_t>(out_->total - 1);
    t.name = out_->strings.Intern(name);
    t.cat = out_->strings.Intern(cat);
    t.pid = out_->strings.Intern(pid);
    t.tid = out_->strings.Intern("i:" + std::to_string(l.id));
    t.correlation = e.correlation;
    if (comm_kind != 0) {
      CommArgs a;
      a.collective_name = comm_kind;
      t.comm_args = static_cast<int32_t>(out_->comm_args.size());
      out_->comm_args.push_back(a);
    }
    out_->events.push_back(t);
    ++out_->by_cat[std::string(cat)];
  }

  void Device(const RawPlane& p, int64_t ordinal) {
    std::string pid = "i:" + std::to_string(ordinal);
    for (const RawLine& l : p.lines) {
      if (IsDerivedLine(l.name)) continue;
      for (const RawEvent& e : l.events) {
        std::string name = p.reader->EventNameOf(e.metadata_id);
        bool copy = name.rfind("Memcpy", 0) == 0 || name.rfind("memcpy", 0) == 0;
        bool set = name.rfind("Memset", 0) == 0 || name.rfind("memset", 0) == 0;
        std::string kind = CollectiveOfHloOp(e.hlo_op);
        Add(l, e, name, copy ? "gpu_memcpy" : set ? "gpu_memset" : "kernel", pid,
            kind.empty() ? 0 : out_->strings.Intern(kind));
      }
    }
  }

  // The host launches of this device's own events (by correlation id): a device does not
  // carry the others' launches.
  size_t Launches(const std::vector<HostMark>& launches, const RawPlane& device) {
    std::set<int64_t> mine;
    for (const RawLine& l : device.lines)
      for (const RawEvent& e : l.events)
        if (e.correlation) mine.insert(*e.correlation);
    size_t added = 0;
    for (const HostMark& m : launches) {
      if (!mine.count(*m.event->correlation)) continue;
      Add(*m.line, *m.event, m.plane->reader->EventNameOf(m.event->metadata_id), "cuda_runtime", "s:" + m.plane->reader->name);
      ++added;
    }
    return added;
  }

  // Steps as ProfilerStep#N user annotations: the host's step marks, else the device's
  // derived "Steps" line, else its "XLA Modules" line's busiest module (xprof-processed files).
  void Steps(const std::vector<HostMark>& host_steps, const RawPlane& device) {
    std::vector<std::pair<HostMark, std::string>> marks;
    std::set<int64_t> seen;
    for (const HostMark& m : host_steps)
      if (seen.insert(*m.event->step_num).second) marks.push_back({m, std::to_string(*m.event->step_num)});
    if (marks.empty()) {
      const RawLine* steps = nullptr;
      const RawLine* modules = nullptr;
      for (const RawLine& l : device.lines) {
        if (l.name == "Steps" && !l.events.empty() && steps == nullptr) steps = &l;
        if (l.name == "XLA Modules" && !l.events.empty() && modules == nullptr) modules = &l;
      }
      // Summed in double: durations are file content and may be anything up to 2^63 ps.
      std::map<std::string, double> total;
      if (steps == nullptr && modules != nullptr)
        for (const RawEvent& e : modules->events)
          total[ModuleName(device.reader->EventNameOf(e.metadata_id))] += static_cast<double>(e.duration_ps);
      auto best = std::max_element(total.begin(), total.end(), [](auto& a, auto& b) { return a.second < b.second; });
      const RawLine* from = steps != nullptr ? steps : modules;
      if (from == nullptr) return;   // no steps anywhere: the analysis says so
      size_t k = 0;
      for (const RawEvent& e : from->events) {   // pointers into the line's own events, kept in `marks`
        if (from == modules && ModuleName(device.reader->EventNameOf(e.metadata_id)) != best->first) continue;
        std::string n = device.reader->EventNameOf(e.metadata_id);
        bool numeric = !n.empty() && std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; });
        marks.push_back({HostMark{from, &e, &device}, numeric && from == steps ? n : std::to_string(k)});
        ++k;
      }
    }
    for (const auto& [m, number] : marks)
      Add(*m.line, *m.event, "ProfilerStep#" + number, "user_annotation", "s:" + m.plane->reader->name);
  }

 private:
  int64_t base_ns_;
  TraceFile* out_;
};

}  // namespace

base::Result<XSpaceContents> ReadXPlane(const std::string& path, const XPlaneLimits& limits) {
  std::vector<uint8_t> bytes;
  if (base::Status st = ReadAll(path, limits.max_bytes, &bytes); !st.ok()) return st;
  auto invalid = [&](const std::string& why, bool too_large = false) {
    return base::Result<XSpaceContents>(too_large ? base::Errc::kTooLarge : base::Errc::kInvalid,
                                        path + ": not a readable XSpace: " + why);
  };
  if (bytes.empty()) return invalid("the file is empty");
  XSpaceContents out;
  WireCursor space(bytes.data(), bytes.size());
  uint32_t f = 0, wt = 0;
  int64_t events = 0;
  std::vector<RawPlane> planes;
  while (space.Next(&f, &wt)) {
    WireCursor inner(nullptr, 0);
    if (f == 1 && wt == 2) {
      if (!space.Bytes(&inner)) break;
      RawPlane p;
      p.reader = std::make_unique<PlaneReader>(inner, limits, &events);
      if (!p.reader->ReadHeaderAndMetadata() || !p.reader->ReadLines(&p.lines))
        return invalid(p.reader->error, p.reader->too_large);
      out.planes.push_back(p.reader->name);
      planes.push_back(std::move(p));
    } else if (f == 4 && wt == 2) {
      std::string_view h;
      if (!space.String(&h)) break;
      out.hostnames.push_back(ValidUtf8(h));
    } else if (!space.Skip(wt)) {
      break;
    }
  }
  if (space.failed()) return invalid(space.error());
  if (planes.empty()) return invalid("no XPlane in " + std::to_string(bytes.size()) + " bytes");
  // One clock for every plane: the saved line timestamps are ns from the session start.
  int64_t base_ns = 0;
  bool have_base = false;
  std::vector<HostMark> steps, launches;
  for (const RawPlane& p : planes) {
    for (const RawLine& l : p.lines) {
      if (!have_base || l.timestamp_ns < base_ns) base_ns = l.timestamp_ns, have_base = true;
      if (DeviceOrdinal(p.reader->name)) continue;
      for (const RawEvent& e : l.events) {
        if (e.step_num) steps.push_back({&l, &e, &p});
        else if (e.correlation) launches.push_back({&l, &e, &p});
      }
    }
  }
  for (const RawPlane& p : planes) {
    std::optional<int64_t> ordinal = DeviceOrdinal(p.reader->name);
    if (!ordinal) continue;
    XPlaneDevice d;
    d.plane = p.reader->name;
    d.ordinal = *ordinal;
    d.trace.format = TraceFile::Format::kXPlane;
    d.trace.distributed = DistributedInfo{*ordinal, std::nullopt, ""};
    DeviceTraceBuilder b(base_ns, &d.trace);
    b.Device(p, *ordinal);
    events += static_cast<int64_t>(b.Launches(launches, p));
    if (events > limits.max_events) return invalid("more than " + std::to_string(limits.max_events) + " events (the reader's cap)", true);
    b.Steps(steps, p);
    d.trace.by_ph["X"] = static_cast<int64_t>(d.trace.events.size());
    out.devices.push_back(std::move(d));
  }
  std::sort(out.devices.begin(), out.devices.end(), [](auto& a, auto& b) { return a.ordinal < b.ordinal; });
  return out;
}

}  // namespace mt::tools::trace
