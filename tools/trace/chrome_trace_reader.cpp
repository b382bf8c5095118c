#include "tools/trace/chrome_trace_reader.h"

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

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

class Handler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Handler> {
 public:
  Handler(TraceFile& out, const ReadLimits& limits) : out_(out), limits_(limits) {}

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
    key_.assign(s, n);
    if (Top() == kTopObject && key_ == "baseTimeNanoseconds") out_.has_base_time_ns = true;
    return true;
  }

 private:
  enum Ctx { kRoot, kTopObject, kEvents, kEvent, kArgs, kDist, kDevProps, kDims, kDims0, kTypes };
  Ctx Top() const { return stack_.empty() ? kRoot : stack_.back(); }

  // An element of an array context (not an object member) is starting: the element count
  // of arrays whose position matters.
  size_t NextIndex() { return position_.empty() ? 0 : position_.back()++; }

  bool OnStart(bool object) {
    if (skip_ > 0) { ++skip_; return true; }
    Ctx top = Top();
    switch (top) {
      case kRoot:
        if (object) return Push(kTopObject);
        out_.format = TraceFile::Format::kLegacy;
        saw_events = true;
        return Push(kEvents);
      case kTopObject:
        if (key_ == "traceEvents") {
          if (object) return Fail("\"traceEvents\" is an object, not an array");
          saw_events = true;
          return Push(kEvents);
        }
        if (key_ == "distributedInfo" && object) { out_.distributed.emplace(); return Push(kDist); }
        if (key_ == "deviceProperties" && !object) return Push(kDevProps);
        break;
      case kEvents:
        if (object) { pending_ = Pending{}; return Push(kEvent); }
        break;
      case kEvent:
        if (key_ == "args" && object) return Push(kArgs);
        if (key_ == "name") pending_.name_buf.clear();
        if (key_ == "ts") pending_.ts.reset();
        if (key_ == "dur") pending_.dur.reset();
        if (key_ == "pid") pending_.pid = "c";
        if (key_ == "tid") pending_.tid = "c";
        break;
      case kArgs:
        if (key_ == "Input Dims" && !object) { Args().input_dims0_present = false; return Push(kDims); }
        if (key_ == "Input type" && !object) return Push(kTypes);
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
        if (key_ == "traceEvents") return Fail("\"traceEvents\" is not an array");
        if (key_ == "displayTimeUnit" && v.kind == Scalar::kString) out_.display_time_unit = v.s;
        return true;
      case kEvents:
        return true;  // not an object: not an event
      case kEvent:
        return EventField(v);
      case kArgs:
        return ArgsField(v);
      case kDist:
        if (key_ == "rank" && v.kind == Scalar::kInt) out_.distributed->rank = v.i;
        if (key_ == "world_size" && v.kind == Scalar::kInt) out_.distributed->world_size = v.i;
        if (key_ == "backend" && v.kind == Scalar::kString) out_.distributed->backend = v.s;
        return true;
      case kDevProps:
        ++out_.device_properties;
        return true;
      case kDims:
        if (NextIndex() == 0) Args().input_dims0_present = true;  // a scalar first entry: no size
        return true;
      case kDims0:
        if (Args().input_dims0) {
          if (v.kind == Scalar::kInt) Args().input_dims0->push_back(v.i);
          else Args().input_dims0.reset();
        }
        return true;
      case kTypes:
        if (NextIndex() == 0 && v.kind == Scalar::kString) Args().input_type0 = out_.strings.Intern(v.s);
        return true;
    }
    return true;
  }

  ValueKey KeyOf(const Scalar& v) {
    if (v.kind == Scalar::kInt) return v.i;
    if (v.kind == Scalar::kDouble && std::isfinite(v.d) && v.d == std::floor(v.d) && std::fabs(v.d) < 9e15)
      return static_cast<int64_t>(v.d);
    if (v.kind == Scalar::kString) return kStringKeyBase + out_.strings.Intern(v.s);
    return std::nullopt;
  }

  static std::string ThreadKey(const Scalar& v) {
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
    if (key_ == "name") {
      if (v.kind == Scalar::kString) p.name_buf.assign(v.s);
      else p.name_buf.clear();
    } else if (key_ == "cat") {
      p.has_cat = v.kind == Scalar::kString;
      if (p.has_cat) p.cat.assign(v.s);
    } else if (key_ == "ph") {
      p.has_ph = v.kind == Scalar::kString;
      if (p.has_ph) p.ph.assign(v.s);
    } else if (key_ == "pid") {
      p.pid = ThreadKey(v);
    } else if (key_ == "tid") {
      p.tid = ThreadKey(v);
    } else if (key_ == "ts") {
      p.ts = v.Number();
    } else if (key_ == "dur") {
      p.dur = v.Number();
    } else if (key_ == "id") {
      p.id = KeyOf(v);
    }
    return true;
  }

  bool ArgsField(const Scalar& v) {
    Pending& p = pending_;
    if (key_ == "correlation") p.correlation = KeyOf(v);
    else if (key_ == "External id") p.external_id = KeyOf(v);
    else if (key_ == "In msg nelems") Args().in_msg_nelems = v.Number();
    else if (key_ == "Out msg nelems") Args().out_msg_nelems = v.Number();
    else if (key_ == "dtype") Args().dtype = v.kind == Scalar::kString ? out_.strings.Intern(v.s) : 0;
    else if (key_ == "Group size") Args().group_size = v.kind == Scalar::kInt ? std::optional<int64_t>(v.i) : std::nullopt;
    else if (key_ == "Collective name") Args().collective_name = v.kind == Scalar::kString ? out_.strings.Intern(v.s) : 0;
    else if (key_ == "Input Dims") Args().input_dims0_present = false;
    return true;
  }

  CommArgs& Args() {
    pending_.has_comm = true;
    return pending_.comm;
  }

  bool FinishEvent() {
    Pending& p = pending_;
    ++out_.total;
    ++cat_counts_[p.has_cat ? p.cat : std::string("(none)")];
    ++ph_counts_[p.has_ph ? p.ph : std::string("(none)")];
    if (p.has_ph && p.ph == "X") {
      if (!p.ts || !p.dur || *p.dur < 0 || !std::isfinite(*p.ts) || !std::isfinite(*p.dur)) {
        ++out_.bad_x;
        return true;
      }
      if (static_cast<int64_t>(out_.events.size()) >= limits_.max_events)
        return Fail("more than " + std::to_string(limits_.max_events) + " complete events (the reader's cap)", true);
      TraceEvent e;
      e.ts = *p.ts;
      e.dur = *p.dur;
      e.index = static_cast<uint32_t>(out_.total - 1);
      e.name = out_.strings.Intern(p.name_buf);
      e.cat = p.has_cat ? out_.strings.Intern(p.cat) : 0;
      e.pid = out_.strings.Intern(p.pid);
      e.tid = out_.strings.Intern(p.tid);
      e.correlation = p.correlation;
      e.external_id = p.external_id;
      if (p.has_comm && HasSizeFields(p.comm)) {
        e.comm_args = static_cast<int32_t>(out_.comm_args.size());
        out_.comm_args.push_back(std::move(p.comm));
      }
      out_.events.push_back(e);
    } else if (p.has_ph && (p.ph == "s" || p.ph == "f" || p.ph == "t") && p.id && p.ts) {
      out_.flows.emplace(std::make_tuple(out_.strings.Intern(p.pid), out_.strings.Intern(p.tid), *p.ts), *p.id);
    }
    return true;
  }

  static bool HasSizeFields(const CommArgs& a) {
    return a.in_msg_nelems || a.out_msg_nelems || a.dtype != 0 || a.group_size || a.collective_name != 0 ||
           a.input_dims0_present || a.input_type0 != 0;
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
    for (auto& [k, n] : cat_counts_) out_.by_cat[k] += n;
    for (auto& [k, n] : ph_counts_) out_.by_ph[k] += n;
  }

 private:
  struct Pending {
    std::string name_buf, cat, ph, pid = "n", tid = "n";
    bool has_cat = false, has_ph = false, has_comm = false;
    std::optional<double> ts, dur;
    ValueKey id, correlation, external_id;
    CommArgs comm;
  };

  TraceFile& out_;
  const ReadLimits& limits_;
  std::vector<Ctx> stack_;
  std::vector<size_t> position_;
  int64_t skip_ = 0;
  std::string key_;
  Pending pending_;
  std::unordered_map<std::string, int64_t> cat_counts_, ph_counts_;
  bool too_large_ = false;
};

}  // namespace

base::Result<TraceFile> ReadChromeTrace(const std::string& path, const ReadLimits& limits) {
  std::error_code ec;
  auto st = std::filesystem::status(path, ec);
  if (ec) return base::StatusOf(ec, path);
  if (!std::filesystem::is_regular_file(st)) return base::Result<TraceFile>(base::Errc::kNotRegular, path + " is not a regular file");
  GzipSource source(path);
  if (!source.open_error().empty()) return base::Result<TraceFile>(base::Errc::kIo, path + ": " + source.open_error());
  TraceFile out;
  Handler handler(out, limits);
  rapidjson::Reader reader;
  // JSON is UTF-8 (RFC 8259): a name with invalid bytes makes the file invalid, so every
  // string a TraceFile holds can be written back as JSON.
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag | rapidjson::kParseValidateEncodingFlag;
  rapidjson::ParseResult ok = reader.Parse<kFlags>(source, handler);
  auto where = [&](size_t offset) {
    return path + " at byte " + std::to_string(offset) + (source.compressed() ? " of its decompressed JSON" : "");
  };
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
