#include "launcher/launch/job_log_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mt::launch {

std::string FormatWall(double seconds) {
  const long total = std::lround(std::max(0.0, seconds));
  const long h = total / 3600, m = (total % 3600) / 60, sec = total % 60;
  char buf[64];
  if (h > 0) std::snprintf(buf, sizeof buf, "%ldh %ldm %lds", h, m, sec);
  else if (m > 0) std::snprintf(buf, sizeof buf, "%ldm %lds", m, sec);
  else std::snprintf(buf, sizeof buf, "%lds", sec);
  return buf;
}

std::string RankLabel(int task, int ntasks) {
  const int width = static_cast<int>(std::to_string(std::max(ntasks - 1, 0)).size());
  char buf[32];
  std::snprintf(buf, sizeof buf, "%*d: ", width, task);
  return buf;
}

std::string RenderJobSummary(const JobSummary& s) {
  // The colour codes are part of the format: the original launcher prints them, and the
  // scanner's Status pattern skips them.
  const std::string status = s.exit_code == 0
                                 ? "\033[32mSUCCESS (exit 0)\033[0m"
                                 : "\033[31mFAILED (exit " + std::to_string(s.exit_code) + ")\033[0m — " + s.reason;
  std::string out;
  out += "========================== JOB SUMMARY ==========================\n";
  out += "  Job:    " + s.job_id + " (" + s.job_name + ")\n";
  out += "  Model:  " + s.model + "\n";
  out += "  Nodes:  " + std::to_string(s.nodes) + "\n";
  out += "  Wall:   " + FormatWall(s.wall_seconds) + "\n";
  out += "  Status: " + status + "\n";
  out += "=================================================================";
  return out;
}

}  // namespace mt::launch
