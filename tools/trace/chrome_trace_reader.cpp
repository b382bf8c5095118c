#include "tools/trace/chrome_trace_reader.h"

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>

#include "tools/trace/gzip_source.h"

namespace mt::tools::trace {
namespace {

// String correlation ids (none in the corpus, but JSON allows them) are keyed apart from
// every integer id by this offset on their interned id.
constexpr int64_t kStringKeyBase = int64_t{1} << 62;

// One JSON scalar as the handler sees it.
struct Scalar {
  enum Kind { kNull, kBool, kInt, kDouble, kString } kind = kNull;
  int64_t i = 0;
  double d = 0;
  std::string_view s;
  static Scalar Of(Kind k, int64_t i, double d = 0, std::string_view s = {}) {
    Scalar v;
    v.kind = k;
    v.i = i;
    v.d = d;
    v.s = s;
    return v;
  }
  std::optional<double> Number() const {
    if (kind == kInt) return static_cast<double>(i);
    if (kind == kDouble) return d;
    return std::nullopt;
  }
};

// The object keys the reader looks at, decided once per key instead of by string
// comparisons at every use.
enum class KeyName : uint8_t {
  kOther, kArgs, kBackend, kBaseTime, kCat, kCollectiveName, kCorrelation, kDeviceProperties, kDisplayTimeUnit, kDistributedInfo, kDtype, kDur, kExternalId, kGroupSize, kId, kInMsg, kInputDims, kInputType, kName, kOutMsg, kPh, kPid, kRank, kTid, kTraceEvents, kTs, kWorldSize
};

KeyName KeyOf(std::string_view k) {
  // By length first: most keys are "ph", "ts", "dur", "pid", "tid", "name", "cat", "args".
  switch (k.size()) {
    case 2:
      if (k == "ph") return KeyName::kPh;
      if (k == "ts") return KeyName::kTs;
      if (k == "id") return KeyName::kId;
      break;
    case 3:
      if (k == "dur") return KeyName::kDur;
      if (k == "pid") return KeyName::kPid;
      if (k == "tid") return KeyName::kTid;
      if (k == "cat") return KeyName::kCat;
      break;
    case 4:
      if (k == "name") return KeyName::kName;
      if (k == "args") return KeyName::kArgs;
      if (k == "rank") return KeyName::kRank;
      break;
    case 5:
      if (k == "dtype") return KeyName::kDtype;
      break;
    case 7:
      if (k == "backend") return KeyName::kBackend;
      break;
    case 10:
      if (k == "Input Dims") return KeyName::kInputDims;
      if (k == "Input type") return KeyName::kInputType;
      if (k == "world_size") return KeyName::kWorldSize;
      if (k == "Group size") return KeyName::kGroupSize;
      break;
    case 11:
      if (k == "correlation") return KeyName::kCorrelation;
      if (k == "External id") return KeyName::kExternalId;
      if (k == "traceEvents") return KeyName::kTraceEvents;
      break;
    case 13:
      if (k == "In msg nelems") return KeyName::kInMsg;
      break;
    case 14:
      if (k == "Out msg nelems") return KeyName::kOutMsg;
      break;
    case 15:
      if (k == "distributedInfo") return KeyName::kDistributedInfo;
      if (k == "displayTimeUnit") return KeyName::kDisplayTimeUnit;
      if (k == "Collective name") return KeyName::kCollectiveName;
      break;
    case 16:
      if (k == "deviceProperties") return KeyName::kDeviceProperties;
      break;
    case 19:
      if (k == "baseTimeNanoseconds") return KeyName::kBaseTime;
      break;
    default:
      break;
  }
  return KeyName::kOther;
}

class Handler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Handler> {
 public:
  Handler(TraceFile& out, const ReadLimits& limits) : out_(out), limits_(limits) {
    none_ = out_.strings.Intern("(none)");
    null_key_ = out_.strings.Intern("n");
  }

  std::string error;        // a structural fault the handler found (parse is then aborted)
  bool saw_events = false;  // a traceEvents array (or the legacy top-level array) was read

  bool Null() { return OnScalar(Scalar{}); }
  bool Bool(bool b) { return OnScalar(Scalar::Of(Scalar::kBool, b ? 1 : 0)); }
  bool Int(int v) { return OnScalar(Scalar::Of(Scalar::kInt, v)); }
  bool Uint(unsigned v) { return OnScalar(Scalar::Of(Scalar::kInt, v)); }
  bool Int64(int64_t v) { return OnScalar(Scalar::Of(Scalar::kInt, v)); }
  bool Uint64(uint64_t v) {
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return OnScalar(Scalar::Of(Scalar::kDouble, 0, static_cast<double>(v)));
    return OnScalar(Scalar::Of(Scalar::kInt, static_cast<int64_t>(v)));
  }
  bool Double(double v) { return OnScalar(Scalar::Of(Scalar::kDouble, 0, v)); }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    return OnScalar(Scalar::Of(Scalar::kString, 0, 0, std::string_view(s, n)));
  }

  bool StartObject() { return OnStart(true); }
  bool StartArray() { return OnStart(false); }
  bool EndObject(rapidjson::SizeType) { return OnEnd(); }
  bool EndArray(rapidjson::SizeType) { return OnEnd(); }

  bool Key(const char* s, rapidjson::SizeType n, bool) {
    if (skip_ > 0) return true;
    key_ = KeyOf(std::string_view(s, n));
    if (Top() == kTopObject && key_ == KeyName::kBaseTime) out_.has_base_time_ns = true;
    return true;
  }

 private:
  enum Ctx { kRoot, kTopObject, kEvents, kEvent, kArgs, kDist, kDevProps, kDims, kDims0, kTypes };
  Ctx Top() const { return stack_.empty() ? kRoot : stack_.back(); }

  // An element of an array context (not an object member) is starting: the element count
  // of arrays whose position matters.
  size_t NextIndex() { return position_.empty() ? 0 : position_.back()++; }

  bool OnStart(bool object) {
    if (static_cast<int64_t>(stack_.size()) + skip_ >= limits_.max_depth)
      return Fail("nested deeper than " + std::to_string(limits_.max_depth) + " levels");
    if (skip_ > 0) { ++skip_; return true; }
    Ctx top = Top();
    switch (top) {
      case kRoot:
        if (object) return Push(kTopObject);
        out_.format = TraceFile::Format::kLegacy;
        saw_events = true;
        return Push(kEvents);
      case kTopObject:
        if (key_ == KeyName::kTraceEvents) {
          if (object) return Fail("\"traceEvents\" is an object, not an array");
          saw_events = true;
          return Push(kEvents);
        }
        if (key_ == KeyName::kDistributedInfo && object) { out_.distributed.emplace(); return Push(kDist); }
        if (key_ == KeyName::kDeviceProperties && !object) return Push(kDevProps);
        break;
      case kEvents:
        if (object) {
          pending_.Reset(null_key_);
          return Push(kEvent);
        }
        break;
      case kEvent:
        if (key_ == KeyName::kArgs && object) return Push(kArgs);
        if (key_ == KeyName::kName) pending_.name = 0;
        if (key_ == KeyName::kTs) pending_.ts.reset();
        if (key_ == KeyName::kDur) pending_.dur.reset();
        if (key_ == KeyName::kPid) pending_.pid = CompoundKey();
        if (key_ == KeyName::kTid) pending_.tid = CompoundKey();
        break;
      case kArgs:
        if (key_ == KeyName::kInputDims && !object) { Args().input_dims0_present = false; return Push(kDims); }
        if (key_ == KeyName::kInputType && !object) return Push(kTypes);
        break;
      case kDevProps:
        ++out_.device_properties;
        break;
      case kDims:
        if (NextIndex() == 0) {
          Args().input_dims0_present = true;
          if (!object) { Args().input_dims0.emplace(); return Push(kDims0); }
        }
        break;
      case kDims0:
        Args().input_dims0.reset();   // a nested value: not a list of ints
        break;
      case kTypes:
        NextIndex();
        break;
      case kDist:
        break;
    }
    skip_ = 1;
    return true;
  }

  bool OnEnd() {
    if (skip_ > 0) { --skip_; return true; }
    Ctx top = Top();
    Pop();
    if (top == kEvent) return FinishEvent();
    if (top == kDims0 && Args().input_dims0 && Args().input_dims0->empty()) Args().input_dims0.reset();
    return true;
  }

  bool OnScalar(const Scalar& v) {
    if (skip_ > 0) return true;
    switch (Top()) {
      case kRoot:
        return Fail("the top-level JSON value is neither an object nor an array");
      case kTopObject:
        if (key_ == KeyName::kTraceEvents) return Fail("\"traceEvents\" is not an array");
        if (key_ == KeyName::kDisplayTimeUnit && v.kind == Scalar::kString) out_.display_time_unit = v.s;
        return true;
      case kEvents:
        return true;  // not an object: not an event
      case kEvent:
        return EventField(v);
      case kArgs:
        return ArgsField(v);
      case kDist:
        if (key_ == KeyName::kRank && v.kind == Scalar::kInt) out_.distributed->rank = v.i;
        if (key_ == KeyName::kWorldSize && v.kind == Scalar::kInt) out_.distributed->world_size = v.i;
        if (key_ == KeyName::kBackend && v.kind == Scalar::kString) out_.distributed->backend = v.s;
        return true;
      case kDevProps:
        ++out_.device_properties;
        return true;
      case kDims:
        if (NextIndex() == 0) Args().input_dims0_present = true;  // a scalar first entry: no size
        return true;
      case kDims0:
        if (Args().input_dims0) {
          // No tensor has 64 dimensions: a longer list is no shape, and must not grow memory.
          if (v.kind == Scalar::kInt && Args().input_dims0->size() < 64) Args().input_dims0->push_back(v.i);
          else Args().input_dims0.reset();
        }
        return true;
      case kTypes:
        if (NextIndex() == 0 && v.kind == Scalar::kString) Args().input_type0 = out_.strings.Intern(v.s);
        return true;
    }
    return true;
  }

  ValueKey ValueKeyOf(const Scalar& v) {
    if (v.kind == Scalar::kInt) return v.i;
    if (v.kind == Scalar::kDouble && std::isfinite(v.d) && v.d == std::floor(v.d) && std::fabs(v.d) < 9e15)
      return static_cast<int64_t>(v.d);
    if (v.kind == Scalar::kString) return kStringKeyBase + out_.strings.Intern(v.s);
    return std::nullopt;
  }

  // The interned key of a pid/tid value ("i:3", "s:CPU functions"); integers, by far the
  // most common, skip building the string once seen.
  uint32_t ThreadKey(const Scalar& v) {
    if (v.kind == Scalar::kInt) {
      auto it = int_keys_.find(v.i);
      if (it != int_keys_.end()) return it->second;
      uint32_t id = out_.strings.Intern(ThreadKeyText(v));
      int_keys_.emplace(v.i, id);
      return id;
    }
    return out_.strings.Intern(ThreadKeyText(v));
  }
  uint32_t CompoundKey() { return out_.strings.Intern("c"); }
  // Interned ph; the one-letter ones (all real ones) from a table.
  uint32_t PhId(const std::string& ph) {
    if (ph.size() != 1) return out_.strings.Intern(ph);
    uint32_t& id = ph_ids_[static_cast<unsigned char>(ph[0])];
    if (id == 0) id = out_.strings.Intern(ph);
    return id;
  }

  static std::string ThreadKeyText(const Scalar& v) {
    switch (v.kind) {
      case Scalar::kInt: return "i:" + std::to_string(v.i);
      case Scalar::kDouble:
        if (std::isfinite(v.d) && v.d == std::floor(v.d) && std::fabs(v.d) < 9e15)
          return "i:" + std::to_string(static_cast<int64_t>(v.d));
        return "d:" + std::to_string(v.d);
      case Scalar::kString: return "s:" + std::string(v.s);
      case Scalar::kBool: return v.i ? "b:1" : "b:0";
      case Scalar::kNull: return "n";
    }
    return "n";
  }

  bool EventField(const Scalar& v) {
    Pending& p = pending_;
    if (key_ == KeyName::kName) {
      p.name = v.kind == Scalar::kString ? out_.strings.Intern(v.s) : 0;
    } else if (key_ == KeyName::kCat) {
      p.has_cat = v.kind == Scalar::kString;
      p.cat = p.has_cat ? out_.strings.Intern(v.s) : 0;
    } else if (key_ == KeyName::kPh) {
      p.has_ph = v.kind == Scalar::kString;
      if (p.has_ph) p.ph.assign(v.s);
    } else if (key_ == KeyName::kPid) {
      p.pid = ThreadKey(v);
    } else if (key_ == KeyName::kTid) {
      p.tid = ThreadKey(v);
    } else if (key_ == KeyName::kTs) {
      p.ts = v.Number();
    } else if (key_ == KeyName::kDur) {
      p.dur = v.Number();
    } else if (key_ == KeyName::kId) {
      p.id = ValueKeyOf(v);
    }
    return true;
  }

  bool ArgsField(const Scalar& v) {
    Pending& p = pending_;
    if (key_ == KeyName::kCorrelation) p.correlation = ValueKeyOf(v);
    else if (key_ == KeyName::kExternalId) p.external_id = ValueKeyOf(v);
    else if (key_ == KeyName::kInMsg) Args().in_msg_nelems = v.Number();
    else if (key_ == KeyName::kOutMsg) Args().out_msg_nelems = v.Number();
    else if (key_ == KeyName::kDtype) Args().dtype = v.kind == Scalar::kString ? out_.strings.Intern(v.s) : 0;
    else if (key_ == KeyName::kGroupSize) Args().group_size = v.kind == Scalar::kInt ? std::optional<int64_t>(v.i) : std::nullopt;
    else if (key_ == KeyName::kCollectiveName) Args().collective_name = v.kind == Scalar::kString ? out_.strings.Intern(v.s) : 0;
    else if (key_ == KeyName::kInputDims) Args().input_dims0_present = false;
    return true;
  }

  CommArgs& Args() {
    pending_.has_comm = true;
    return pending_.comm;
  }

  bool FinishEvent() {
    Pending& p = pending_;
    if (static_cast<int64_t>(out_.strings.size()) > limits_.max_strings)
      return Fail("more than " + std::to_string(limits_.max_strings) + " distinct strings (the reader's cap)", true);
    ++out_.total;
    Count(cat_counts_, p.has_cat ? p.cat : none_);
    Count(ph_counts_, p.has_ph ? PhId(p.ph) : none_);
    if (p.has_ph && p.ph == "X") {
      if (!p.ts || !p.dur || *p.dur < 0 || !std::isfinite(*p.ts) || !std::isfinite(*p.dur)) {
        ++out_.bad_x;
        return true;
      }
      if (static_cast<int64_t>(out_.events.size() + out_.flows.size()) >= limits_.max_events)
        return Fail("more than " + std::to_string(limits_.max_events) + " complete events (the reader's cap)", true);
      TraceEvent e;
      e.ts = *p.ts;
      e.dur = *p.dur;
      e.index = static_cast<uint32_t>(out_.total - 1);
      e.name = p.name;
      e.cat = p.has_cat ? p.cat : 0;
      e.pid = p.pid;
      e.tid = p.tid;
      e.correlation = p.correlation;
      e.external_id = p.external_id;
      if (p.has_comm && KeepsSizeFields(p.name, p.comm)) {
        e.comm_args = static_cast<int32_t>(out_.comm_args.size());
        out_.comm_args.push_back(std::move(p.comm));
      }
      out_.events.push_back(e);
    } else if (p.has_ph && (p.ph == "s" || p.ph == "f" || p.ph == "t") && p.id && p.ts) {
      if (!out_.flows.emplace(std::make_tuple(p.pid, p.tid, *p.ts), *p.id).second) return true;
      if (static_cast<int64_t>(out_.events.size() + out_.flows.size()) > limits_.max_events)
        return Fail("more than " + std::to_string(limits_.max_events) + " events (the reader's cap)", true);
    }
    return true;
  }

  // Size fields are kept where the analyses read them: a collective's own (message
  // counts, dtype, group size, collective name), and input shapes only on the CPU records
  // that wrap a collective (nccl:*, gloo:*, record_param_comms) — not on every op a
  // record_shapes trace annotates, which would double the memory of a large trace.
  bool KeepsSizeFields(uint32_t name, const CommArgs& a) {
    if (a.in_msg_nelems || a.out_msg_nelems || a.dtype != 0 || a.group_size || a.collective_name != 0) return true;
    if (!a.input_dims0_present && a.input_type0 == 0) return false;
    if (name >= comm_record_.size()) comm_record_.resize(out_.strings.size() + 1024, -1);
    int8_t& known = comm_record_[name];
    if (known < 0) {
      std::string_view n = out_.strings[name];
      known = n.rfind("nccl:", 0) == 0 || n.rfind("rccl:", 0) == 0 || n.rfind("gloo:", 0) == 0 || n == "record_param_comms";
    }
    return known == 1;
  }

  bool Push(Ctx c) {
    stack_.push_back(c);
    position_.push_back(0);
    return true;
  }
  void Pop() {
    stack_.pop_back();
    position_.pop_back();
  }
  bool Fail(std::string why, bool too_large = false) {
    error = std::move(why);
    too_large_ = too_large;
    return false;
  }

 public:
  bool too_large() const { return too_large_; }
  void Publish() {
    for (size_t id = 0; id < cat_counts_.size(); ++id)
      if (cat_counts_[id] > 0) out_.by_cat[out_.strings[static_cast<uint32_t>(id)]] += cat_counts_[id];
    for (size_t id = 0; id < ph_counts_.size(); ++id)
      if (ph_counts_[id] > 0) out_.by_ph[out_.strings[static_cast<uint32_t>(id)]] += ph_counts_[id];
  }

 private:
  struct Pending {
    uint32_t name = 0, cat = 0, pid = 0, tid = 0;   // interned (pid/tid 0: set by Reset)
    std::string ph;
    bool has_cat = false, has_ph = false, has_comm = false;
    std::optional<double> ts, dur;
    ValueKey id, correlation, external_id;
    CommArgs comm;
    void Reset(uint32_t null_key) {
      name = cat = 0;
      pid = tid = null_key;
      ph.clear();
      has_cat = has_ph = false;
      if (has_comm) comm = CommArgs{};
      has_comm = false;
      ts.reset();
      dur.reset();
      id.reset();
      correlation.reset();
      external_id.reset();
    }
  };

  TraceFile& out_;
  const ReadLimits& limits_;
  std::vector<Ctx> stack_;
  std::vector<size_t> position_;
  int64_t skip_ = 0;
  KeyName key_ = KeyName::kOther;
  Pending pending_;
  static void Count(std::vector<int64_t>& counts, uint32_t id) {
    if (id >= counts.size()) counts.resize(id + 1);
    ++counts[id];
  }
  std::vector<int64_t> cat_counts_, ph_counts_;   // by interned string id
  std::unordered_map<int64_t, uint32_t> int_keys_;
  uint32_t ph_ids_[256] = {};
  std::vector<int8_t> comm_record_;   // by name id: -1 unknown, 0/1
  uint32_t none_ = 0, null_key_ = 0;
  bool too_large_ = false;
};

}  // namespace

base::Result<TraceFile> ReadChromeTrace(const std::string& path, const ReadLimits& limits) {
  std::error_code ec;
  auto st = std::filesystem::status(path, ec);
  if (ec) return base::StatusOf(ec, path);
  if (!std::filesystem::is_regular_file(st)) return base::Result<TraceFile>(base::Errc::kNotRegular, path + " is not a regular file");
  GzipSource source(path, limits.max_bytes);
  if (!source.open_error().empty()) return base::Result<TraceFile>(base::Errc::kIo, path + ": " + source.open_error());
  TraceFile out;
  // Room for the events a file of this size holds (~150 bytes an event, ~10x gzip), so the
  // vector never copies itself while growing; untouched capacity costs no memory.
  source.Peek();   // the first read tells gzip from plain
  uint64_t bytes = std::filesystem::file_size(path, ec);
  uint64_t guess = (source.compressed() ? 10 : 1) * (ec ? 0 : bytes) / 150;
  out.events.reserve(static_cast<size_t>(std::min<uint64_t>({guess, static_cast<uint64_t>(limits.max_events), 16'000'000})));
  Handler handler(out, limits);
  rapidjson::Reader reader;
  // Not kParseValidateEncodingFlag (a tenth of the time): the pool repairs what it keeps.
  // Not kParseFullPrecisionFlag: integers are exact either way, and the last-ulp error of a
  // fractional µs time stamp is far below the ns the profilers resolve.
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag;
  rapidjson::ParseResult ok = reader.Parse<kFlags>(source, handler);
  auto where = [&](size_t offset) {
    return path + " at byte " + std::to_string(offset) + (source.compressed() ? " of its decompressed JSON" : "");
  };
  if (source.over_cap())
    return base::Result<TraceFile>(base::Errc::kTooLarge, path + ": more than " + std::to_string(limits.max_bytes) +
                                                              " bytes of JSON (the reader's cap)");
  if (!source.error().empty())
    return base::Result<TraceFile>(base::Errc::kInvalid, where(source.Tell()) + ": the gzip data is corrupt or truncated (" + source.error() + ")");
  if (!handler.error.empty())
    return base::Result<TraceFile>(handler.too_large() ? base::Errc::kTooLarge : base::Errc::kInvalid,
                                   where(ok.Offset()) + ": " + handler.error);
  if (!ok)
    return base::Result<TraceFile>(base::Errc::kInvalid,
                                   where(ok.Offset()) + ": not valid JSON (" + rapidjson::GetParseError_En(ok.Code()) + ")");
  if (!handler.saw_events)
    return base::Result<TraceFile>(base::Errc::kInvalid, path + ": a JSON object without \"traceEvents\": not a Chrome trace");
  handler.Publish();
  return out;
}

}  // namespace mt::tools::trace
