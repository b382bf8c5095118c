#include "launcher/launch/slurm_job_files.h"

#include <ctime>
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

}  // namespace

std::optional<double> SlurmTime(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  tm.tm_isdst = -1;
  const std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1) || t > std::time(nullptr)) return std::nullopt;
  return static_cast<double>(t);
}

namespace {

// A NodeList value expanded; nothing for "(null)" / "None assigned" (not placed yet).
std::vector<std::string> Expand(const std::string& list) {
  if (list.empty() || list[0] == '(' || list.find(' ') != std::string::npos) return {};
  auto hosts = base::ExpandHostList(list, 100000);
  return hosts ? *hosts : std::vector<std::string>{};
}

}  // namespace

SlurmPlacement SlurmJobPlacement(const std::string& job_id) {
  if (job_id.empty() || job_id.find_first_not_of("0123456789_") != std::string::npos) return {};
  if (!FindOnPath("scontrol").empty()) {
    auto sc = RunCapture({"scontrol", "show", "job", "-o", job_id}, {}, kTimeoutS);
    if (sc.status == 0) {
      SlurmPlacement p{Expand(Field(sc.out, "NodeList")), SlurmTime(Field(sc.out, "StartTime")),
                       SlurmTime(Field(sc.out, "EndTime")), "slurm: scontrol show job"};
      if (Field(sc.out, "JobState") == "RUNNING") p.end.reset();   // EndTime is its time limit
      if (!p.hosts.empty() || p.start) return p;
    }
  }
  if (FindOnPath("sacct").empty()) return {};
  auto sa = RunCapture({"sacct", "-n", "-X", "-P", "-j", job_id, "-o", "NodeList,Start,End"}, {}, kTimeoutS);
  if (sa.status != 0) return {};
  std::istringstream line(sa.out.substr(0, sa.out.find('\n')));
  std::string nodes, start, end;
  std::getline(line, nodes, '|'), std::getline(line, start, '|'), std::getline(line, end, '|');
  SlurmPlacement p{Expand(nodes), SlurmTime(start), SlurmTime(end), "slurm: sacct"};
  if (p.hosts.empty() && !p.start) return {};
  return p;
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
