// libFuzzer target: the streaming Chrome-trace reader (tools/trace/chrome_trace_reader.h)
// and the analyses over whatever it accepts. The first byte chooses whether the rest is
// gzip-compressed first (so inflate succeeds and the JSON paths behind it are reached) or
// read as it is (plain JSON, or bytes that merely start like gzip). The input lives in a
// memfd, read through /proc/self/fd like any file.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/fuzz/memfd_file.h"
#include "tools/trace/chrome_trace_reader.h"
#include "tools/trace/rank_comparison.h"
#include "tools/trace/trace_analysis.h"
#include "tools/trace/trace_diff.h"
#include "tools/trace/trace_json.h"

namespace {

std::string Gzip(const uint8_t* data, size_t size) {
  z_stream z{};
  deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::vector<unsigned char> out(deflateBound(&z, size) + 64);
  z.next_in = const_cast<Bytef*>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  std::string s(reinterpret_cast<char*>(out.data()), z.total_out);
  deflateEnd(&z);
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace tr = mt::tools::trace;
  if (size < 1) return 0;
  std::string bytes = (data[0] & 1) ? Gzip(data + 1, size - 1) : std::string(reinterpret_cast<const char*>(data) + 1, size - 1);
  MemfdFile file(bytes.data(), bytes.size());
  if (!file.ok()) return 0;
  tr::ReadLimits limits;
  limits.max_events = 20000;
  auto t = tr::ReadChromeTrace(file.path(), limits);
  if (!t.ok()) return 0;
  tr::TraceAnalysis a = tr::AnalyseTrace(*t, "rank3.pt.trace.json");
  (void)tr::AnalysisJson(a).dump();
  tr::RankComparison r = tr::CompareRanks({a, a});
  (void)tr::RankComparisonJson(r).dump();
  (void)tr::TraceDiffJson(tr::DiffTraces(a, a)).dump();
  return 0;
}
