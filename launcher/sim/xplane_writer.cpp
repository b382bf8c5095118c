#include "launcher/sim/xplane_writer.h"

#include "launcher/sim/protobuf_encode.h"

namespace mt::launch::sim {
namespace {

// Metadata ids of one plane: event names and stat names (string stat values are stat
// metadata too, referenced by id).
class PlaneMetadata {
 public:
  int64_t Event(const std::string& name) { return Id(events_, name); }
  int64_t Stat(const std::string& name) { return Id(stats_, name); }

  // event_metadata (field 4) and stat_metadata (5): map entries {key 1: id, value 2: {id 1, name 2}}.
  void Encode(std::string& plane) const {
    EncodeMap(plane, 4, events_);
    EncodeMap(plane, 5, stats_);
  }

 private:
  static void EncodeMap(std::string& plane, int field, const std::map<std::string, int64_t>& m) {
    for (const auto& [name, id] : m) {
      std::string meta, entry;
      PutVarintField(meta, 1, static_cast<uint64_t>(id));
      PutBytes(meta, 2, name);
      PutVarintField(entry, 1, static_cast<uint64_t>(id));
      PutBytes(entry, 2, meta);
      PutBytes(plane, field, entry);
    }
  }
  static int64_t Id(std::map<std::string, int64_t>& m, const std::string& name) {
    auto it = m.find(name);
    if (it != m.end()) return it->second;
    int64_t id = static_cast<int64_t>(m.size()) + 1;
    m.emplace(name, id);
    return id;
  }
  std::map<std::string, int64_t> events_, stats_;
};

std::string EncodeStat(PlaneMetadata& md, const XStatValue& s) {
  std::string out;
  PutVarintField(out, 1, static_cast<uint64_t>(md.Stat(s.name)));
  if (const auto* i = std::get_if<int64_t>(&s.value)) PutVarintField(out, 4, static_cast<uint64_t>(*i));
  else if (const auto* u = std::get_if<uint64_t>(&s.value)) PutVarintField(out, 3, *u);
  else PutVarintField(out, 7, static_cast<uint64_t>(md.Stat(std::get<std::string>(s.value))));
  return out;
}

std::string EncodePlane(const XPlaneSpec& p) {
  PlaneMetadata md;
  std::string body;
  PutVarintField(body, 1, static_cast<uint64_t>(p.id));
  PutBytes(body, 2, p.name);
  for (const XLineSpec& l : p.lines) {
    std::string line;
    PutVarintField(line, 1, static_cast<uint64_t>(l.id));
    PutBytes(line, 2, l.name);
    PutVarintField(line, 3, static_cast<uint64_t>(l.timestamp_ns));
    for (const XEventSpec& e : l.events) {
      std::string ev;
      PutVarintField(ev, 1, static_cast<uint64_t>(md.Event(e.name)));
      PutVarintField(ev, 2, static_cast<uint64_t>(e.offset_ps));
      PutVarintField(ev, 3, static_cast<uint64_t>(e.duration_ps));
      for (const XStatValue& s : e.stats) PutBytes(ev, 4, EncodeStat(md, s));
      PutBytes(line, 4, ev);
    }
    PutBytes(body, 3, line);
  }
  std::string plane_stats;
  for (const XStatValue& s : p.stats) PutBytes(plane_stats, 6, EncodeStat(md, s));
  md.Encode(body);    // fields 4 and 5 after the lines, in field order
  body += plane_stats;
  return body;
}

}  // namespace

std::string EncodeXSpace(const std::vector<XPlaneSpec>& planes, const std::vector<std::string>& hostnames) {
  std::string out;
  for (const XPlaneSpec& p : planes) PutBytes(out, 1, EncodePlane(p));
  for (const std::string& h : hostnames) PutBytes(out, 4, h);
  return out;
}

}  // namespace mt::launch::sim
