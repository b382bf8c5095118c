#include "tools/tsdb_blocks.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

#include "mcp/json.h"

namespace mt::tools {
namespace fs = std::filesystem;

namespace {

bool LooksLikeUlid(const std::string& name) {
  if (name.size() != 26) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z'); });
}

}  // namespace

TsdbLayout ReadTsdbLayout(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw TsdbError(TsdbError::Code::kMissing, "no TSDB directory at " + dir.string() +
                                                   " (the job ran without Prometheus, or its output was moved)");
  TsdbLayout out;
  out.dir = dir;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == "wal" && it->is_directory()) {
      for (fs::directory_iterator w(it->path(), ec), wend; !ec && w != wend; w.increment(ec))
        if (w->is_regular_file() && w->file_size() > 0) out.has_wal = true;
      ec.clear();
      continue;
    }
    if (!LooksLikeUlid(name) || !it->is_directory()) continue;
    const fs::path meta = it->path() / "meta.json";
    std::ifstream in(meta);
    if (!in)
      throw TsdbError(TsdbError::Code::kCorrupt, "TSDB block " + name + " has no readable meta.json (" + meta.string() + ")");
    std::stringstream ss;
    ss << in.rdbuf();
    Json j = Json::parse(ss.str(), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("minTime") || !j.contains("maxTime") ||
        !j["minTime"].is_number_integer() || !j["maxTime"].is_number_integer())
      throw TsdbError(TsdbError::Code::kCorrupt, "TSDB block " + name + ": meta.json is not a Prometheus block meta (" +
                                                     meta.string() + ")");
    TsdbBlock b;
    b.ulid = name;
    b.min_ms = j["minTime"].get<int64_t>();
    b.max_ms = j["maxTime"].get<int64_t>();
    if (b.max_ms <= b.min_ms)
      throw TsdbError(TsdbError::Code::kCorrupt, "TSDB block " + name + ": maxTime is not after minTime in meta.json");
    if (j.contains("stats") && j["stats"].is_object()) {
      b.samples = j["stats"].value("numSamples", int64_t{0});
      b.series = j["stats"].value("numSeries", int64_t{0});
    }
    out.blocks.push_back(b);
  }
  if (ec) throw TsdbError(TsdbError::Code::kMissing, "cannot read TSDB directory " + dir.string() + ": " + ec.message());
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
