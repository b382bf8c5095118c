#include "tools/trace/trace_files.h"

#include <algorithm>

#include "tools/trace/chrome_trace_reader.h"
#include "tools/trace/xplane_reader.h"

namespace mt::tools::trace {

namespace fs = std::filesystem;

namespace {
bool EndsWith(const std::string& n, const std::string& s) {
  return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
}
}  // namespace

bool LooksLikeTraceName(const std::string& n) {
  auto ends = [&](const std::string& s) { return EndsWith(n, s); };
  if (ends(".xplane.pb")) return true;
  if (!ends(".json") && !ends(".json.gz")) return false;
  return n.find("trace") != std::string::npos || n.rfind("rank", 0) == 0;
}

base::Result<std::vector<fs::path>> FindTraceFiles(const fs::path& path, size_t max_files) {
  std::error_code ec;
  auto st = fs::symlink_status(path, ec);
  if (ec) return base::StatusOf(ec, path.string());
  if (fs::is_regular_file(st)) return std::vector<fs::path>{path};
  if (fs::is_symlink(st)) {
    auto target = fs::status(path, ec);
    if (!ec && fs::is_regular_file(target)) return std::vector<fs::path>{path};
  }
  if (!fs::is_directory(st)) return base::Result<std::vector<fs::path>>(base::Errc::kNotRegular, path.string() + " is neither a file nor a directory");
  std::vector<fs::path> out;
  fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) return base::StatusOf(ec, path.string());
  for (; it != end; it.increment(ec)) {
    if (ec) return base::StatusOf(ec, path.string());
    if (it.depth() >= 8) it.disable_recursion_pending();
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
    if (!LooksLikeTraceName(it->path().filename().string())) continue;
    if (out.size() >= max_files)
      return base::Result<std::vector<fs::path>>(base::Errc::kTooMany, path.string() + " holds more than " + std::to_string(max_files) + " trace files");
    out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

base::Result<std::vector<TraceAnalysis>> AnalyseTraceFile(const fs::path& file) {
  std::string name = file.filename().string();
  std::vector<TraceAnalysis> out;
  if (EndsWith(name, ".xplane.pb")) {
    auto space = ReadXPlane(file.string());
    if (!space.ok()) return space.status();
    if (space->devices.empty())
      return base::Result<std::vector<TraceAnalysis>>(base::Errc::kInvalid, file.string() + " has no device plane (/device:GPU:N): a host-only profile");
    for (const XPlaneDevice& d : space->devices) out.push_back(AnalyseTrace(d.trace, name + ":" + d.plane));
    return out;
  }
  auto t = ReadChromeTrace(file.string());
  if (!t.ok()) return t.status();
  out.push_back(AnalyseTrace(*t, name));
  return out;
}

}  // namespace mt::tools::trace
