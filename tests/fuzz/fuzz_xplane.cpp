// libFuzzer target: the XSpace reader (tools/trace/xplane_reader.h: a bounds-checked walk
// of the protobuf wire format) and the analyses of every device plane it yields. The input
// lives in a memfd, read through /proc/self/fd like any file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/memfd_file.h"
#include "tools/trace/rank_comparison.h"
#include "tools/trace/trace_analysis.h"
#include "tools/trace/trace_json.h"
#include "tools/trace/xplane_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace tr = mt::tools::trace;
  MemfdFile file(data, size);
  if (!file.ok()) return 0;
  tr::XPlaneLimits limits;
  limits.max_events = 20000;
  auto x = tr::ReadXPlane(file.path(), limits);
  if (!x.ok()) return 0;
  std::vector<tr::TraceAnalysis> all;
  for (const tr::XPlaneDevice& d : x->devices) {
    all.push_back(tr::AnalyseTrace(d.trace, "h.xplane.pb:" + d.plane));
    (void)tr::AnalysisJson(all.back()).dump();
  }
  (void)tr::RankComparisonJson(tr::CompareRanks(all)).dump();
  return 0;
}
