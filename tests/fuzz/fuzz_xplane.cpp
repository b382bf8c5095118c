// libFuzzer target: the XSpace reader (tools/trace/xplane_reader.h: a bounds-checked walk
// of the protobuf wire format) and the analyses of every device plane it yields. The input
// lives in a memfd, read through /proc/self/fd like any file (the reader maps it).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "tools/trace/rank_comparison.h"
#include "tools/trace/trace_analysis.h"
#include "tools/trace/trace_json.h"
#include "tools/trace/xplane_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace tr = mt::tools::trace;
  int fd = memfd_create("xplane", 0);
  if (fd < 0) return 0;
  if (write(fd, data, size) != static_cast<ssize_t>(size)) {
    close(fd);
    return 0;
  }
  tr::XPlaneLimits limits;
  limits.max_events = 20000;
  auto x = tr::ReadXPlane("/proc/self/fd/" + std::to_string(fd), limits);
  close(fd);
  if (!x.ok()) return 0;
  std::vector<tr::TraceAnalysis> all;
  for (const tr::XPlaneDevice& d : x->devices) {
    all.push_back(tr::AnalyseTrace(d.trace, "h.xplane.pb:" + d.plane));
    (void)tr::AnalysisJson(all.back()).dump();
  }
  (void)tr::RankComparisonJson(tr::CompareRanks(all)).dump();
  return 0;
}
