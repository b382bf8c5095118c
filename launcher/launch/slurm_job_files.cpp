#include "launcher/launch/slurm_job_files.h"

#include <sstream>

#include "launcher/launch/process.h"

namespace mt::launch {
namespace {

constexpr double kTimeoutS = 10;

// A `Key=value` field of `scontrol show job -o` (one line, fields separated by spaces; paths
// with spaces are not representable there, as in Slurm itself).
std::string Field(const std::string& line, const std::string& key) {
  std::istringstream in(line);
  std::string tok;
  while (in >> tok)
    if (tok.rfind(key + "=", 0) == 0) return tok.substr(key.size() + 1);
  return "";
}

}  // namespace

std::vector<std::filesystem::path> SlurmJobOutputs(const std::string& job_id) {
  std::vector<std::filesystem::path> out;
  if (job_id.empty() || job_id.find_first_not_of("0123456789_") != std::string::npos) return out;
  if (FindOnPath("scontrol").empty()) return out;
  auto sc = RunCapture({"scontrol", "show", "job", "-o", job_id}, {}, kTimeoutS);
  if (sc.status == 0) {
    const std::string so = Field(sc.out, "StdOut"), se = Field(sc.out, "StdErr");
    if (!so.empty() && so[0] == '/') out.emplace_back(so);
    if (!se.empty() && se[0] == '/' && se != so) out.emplace_back(se);
    if (!out.empty()) return out;
  }
  if (FindOnPath("sacct").empty()) return out;
  auto sa = RunCapture({"sacct", "-n", "-X", "-P", "-j", job_id, "-o", "WorkDir"}, {}, kTimeoutS);
  std::string dir = sa.status == 0 ? sa.out.substr(0, sa.out.find('\n')) : "";
  if (!dir.empty() && dir[0] == '/') out.emplace_back(std::filesystem::path(dir) / ("slurm-" + job_id + ".out"));
  return out;
}

}  // namespace mt::launch
