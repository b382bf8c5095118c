#include "tools/tsdb/tsdb_blocks.h"

#include <algorithm>

#include "base/workspace_files.h"
#include "mcp/json.h"

namespace mt::tools {
namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxTsdbEntries = 100000;   // blocks + wal segments; a 10-year TSDB has < 2000

bool LooksLikeUlid(const std::string& name) {
  if (name.size() != 26) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z'); });
}

// `p` (a directory or a link to one) resolved inside `root`; throws kUnsafe for a link out
// of the root or a loop, returns an empty path when it is not a directory.
fs::path ConfinedDir(const base::FileRoot& root, const fs::path& p, const std::string& what) {
  auto real = root.Confine(p);
  if (!real.ok()) {
    if (real.code() == base::Errc::kEscapes)
      throw TsdbError(TsdbError::Code::kUnsafe, what + " is a symbolic link that leads outside " + root.path().string() +
                                                    "; a job's TSDB is read only inside its job directory");
    if (real.code() == base::Errc::kLoop) throw TsdbError(TsdbError::Code::kUnsafe, what + " is a symbolic link loop");
    return {};
  }
  return base::TargetType(*real) == base::EntryType::kDirectory ? *real : fs::path();
}

int64_t MetaTime(const Json& j, const char* key, const std::string& ulid) {
  if (!j.contains(key) || !j[key].is_number_integer())
    throw TsdbError(TsdbError::Code::kCorrupt, "TSDB block " + ulid + ": meta.json is not a Prometheus block meta (no integer " +
                                                   key + ")");
  int64_t v = j[key].is_number_unsigned() && j[key].get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)
                  ? INT64_MAX
                  : j[key].get<int64_t>();
  if (v < kMinSaneMs || v > kMaxSaneMs)
    throw TsdbError(TsdbError::Code::kCorrupt,
                    "TSDB block " + ulid + ": meta.json " + key + " " + std::to_string(v) +
                        " ms is outside 2000-01-01..2100-01-01; the block is corrupt or forged (move it out of prometheus/)");
  return v;
}

}  // namespace

TsdbLayout ReadTsdbLayout(const fs::path& dir) { return ReadTsdbLayout(dir, fs::path()); }

TsdbLayout ReadTsdbLayout(const fs::path& dir, const fs::path& root_dir) {
  const auto missing = [&](const std::string& why) {
    return TsdbError(TsdbError::Code::kMissing, "no TSDB directory at " + dir.string() + " (" + why + ")");
  };
  fs::path rp = !root_dir.empty() ? root_dir : dir.has_parent_path() ? dir.parent_path() : fs::path(".");
  auto root = base::FileRoot::Make(rp);
  if (!root.ok() || base::LinkType(dir) == base::EntryType::kNone)
    throw missing("the job ran without Prometheus, or its output was moved");
  TsdbLayout out;
  out.dir = dir;
  out.root = root->path();
  out.real_dir = ConfinedDir(*root, dir, "the TSDB directory " + dir.string());
  if (out.real_dir.empty()) throw missing("it is not a directory");
  auto entries = base::ListDirectory(out.real_dir, kMaxTsdbEntries);
  if (!entries.ok()) {
    if (entries.code() == base::Errc::kTooMany)
      throw TsdbError(TsdbError::Code::kCorrupt, "the TSDB at " + dir.string() + " holds more than " +
                                                     std::to_string(kMaxTsdbEntries) + " entries; not a Prometheus TSDB");
    throw TsdbError(TsdbError::Code::kMissing, "cannot read TSDB directory " + dir.string() + ": " + entries.message());
  }
  for (const auto& e : *entries) {
    const std::string& name = e.name;
    const bool dirish = e.type == base::EntryType::kDirectory || e.type == base::EntryType::kSymlink;
    if (name == "wal" && dirish) {
      fs::path wal = ConfinedDir(*root, out.real_dir / "wal", "wal/ of the TSDB at " + dir.string());
      if (wal.empty()) continue;
      auto segs = base::ListDirectory(wal, kMaxTsdbEntries);
      if (segs.ok())
        for (const auto& s : *segs)
          if (s.type == base::EntryType::kRegular && s.size > 0) out.has_wal = true;
      continue;
    }
    if (!LooksLikeUlid(name) || !dirish) continue;
    fs::path block = ConfinedDir(*root, out.real_dir / name, "TSDB block " + name);
    if (block.empty()) continue;
    auto text = base::ReadSmallFile(*root, block / "meta.json", kMaxMetaBytes);
    if (!text.ok()) {
      using base::Errc;
      if (text.code() == Errc::kNotFound)
        throw TsdbError(TsdbError::Code::kCorrupt, "TSDB block " + name + " has no readable meta.json (" +
                                                       root->Display(block / "meta.json") + ")");
      const bool unsafe = text.code() == Errc::kEscapes || text.code() == Errc::kLoop;
      throw TsdbError(unsafe ? TsdbError::Code::kUnsafe : TsdbError::Code::kCorrupt, "TSDB block " + name + ": " + text.message());
    }
    Json j = Json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw TsdbError(TsdbError::Code::kCorrupt, "TSDB block " + name + ": meta.json is not a Prometheus block meta (" +
                                                     root->Display(block / "meta.json") + ")");
    TsdbBlock b;
    b.ulid = name;
    b.real_dir = block;
    b.min_ms = MetaTime(j, "minTime", name);
    b.max_ms = MetaTime(j, "maxTime", name);
    if (b.max_ms <= b.min_ms)
      throw TsdbError(TsdbError::Code::kCorrupt, "TSDB block " + name + ": maxTime is not after minTime in meta.json");
    if (j.contains("stats") && j["stats"].is_object()) {
      const Json& st = j["stats"];
      if (st.contains("numSamples") && st["numSamples"].is_number_integer()) b.samples = st["numSamples"].get<int64_t>();
      if (st.contains("numSeries") && st["numSeries"].is_number_integer()) b.series = st["numSeries"].get<int64_t>();
    }
    out.blocks.push_back(b);
  }
  if (out.blocks.empty() && !out.has_wal)
    throw TsdbError(TsdbError::Code::kEmpty, "the TSDB at " + dir.string() +
                                                 " holds no blocks and no WAL; nothing was recorded (see the "
                                                 "[Prometheus] lines of the job log and prometheus.log)");
  std::sort(out.blocks.begin(), out.blocks.end(), [](const TsdbBlock& a, const TsdbBlock& b) { return a.min_ms < b.min_ms; });
  if (!out.blocks.empty()) {
    out.min_ms = out.blocks.front().min_ms;
    out.max_ms = 0;
    for (const auto& b : out.blocks) out.max_ms = std::max(out.max_ms, b.max_ms);
  }
  return out;
}

}  // namespace mt::tools
