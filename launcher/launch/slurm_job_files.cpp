#include "launcher/launch/slurm_job_files.h"

#include <sstream>

#include "base/hostlist.h"
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

// A NodeList value expanded; nothing for "(null)" / "None assigned" (not placed yet).
std::vector<std::string> Expand(const std::string& list) {
  if (list.empty() || list[0] == '(' || list.find(' ') != std::string::npos) return {};
  auto hosts = base::ExpandHostList(list, 100000);
  return hosts ? *hosts : std::vector<std::string>{};
}

}  // namespace

SlurmNodes SlurmJobNodes(const std::string& job_id) {
  if (job_id.empty() || job_id.find_first_not_of("0123456789_") != std::string::npos) return {};
  if (!FindOnPath("scontrol").empty()) {
    auto sc = RunCapture({"scontrol", "show", "job", "-o", job_id}, {}, kTimeoutS);
    if (sc.status == 0)
      if (auto hosts = Expand(Field(sc.out, "NodeList")); !hosts.empty()) return {hosts, "slurm: scontrol show job"};
  }
  if (FindOnPath("sacct").empty()) return {};
  auto sa = RunCapture({"sacct", "-n", "-X", "-P", "-j", job_id, "-o", "NodeList"}, {}, kTimeoutS);
  if (sa.status != 0) return {};
  if (auto hosts = Expand(sa.out.substr(0, sa.out.find('\n'))); !hosts.empty()) return {hosts, "slurm: sacct"};
  return {};
}

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
