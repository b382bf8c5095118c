#include "tools/compare/compare_trace.h"

#include <cmath>

#include "tools/common/stats.h"
#include "tools/perf/perf_artifacts.h"
#include "tools/perf/perf_trace.h"
#include "tools/trace/event_classes.h"
#include "tools/trace/rank_comparison.h"
#include "tools/trace/trace_diff.h"

namespace mt::tools {
namespace {

double R3(double v) { return RoundDecimals(v, 3); }
double R1(double v) { return RoundDecimals(v, 1); }
Nullable<double> Ms(const std::optional<double>& us) { return us ? Nullable<double>(R3(*us / 1000)) : Nullable<double>(); }
Nullable<double> Pct(const std::optional<double>& share) { return share ? Nullable<double>(R1(100 * *share)) : Nullable<double>(); }

std::string Verdict(const std::vector<trace::TraceAnalysis>& an) {
  trace::RankComparison r = trace::CompareRanks(an);
  return r.straggler ? "straggler " + std::to_string(*r.straggler) : r.verdict;
}

}  // namespace

Nullable<CompareTraceView> CompareJobTraces(const JobFiles& a, const JobFiles& b, std::vector<std::string>* notes) {
  if (a.dir.empty() || b.dir.empty()) return {};
  PerfTrace ta = ReadPerfTrace(a.dir, FindPerfArtifacts(a.dir), notes);
  if (ta.analyses.empty()) return {};
  PerfTrace tb = ReadPerfTrace(b.dir, FindPerfArtifacts(b.dir), notes);
  if (tb.analyses.empty()) return {};
  trace::TraceDiff d = trace::DiffTraces(ta.analyses.front(), tb.analyses.front());
  CompareTraceView v;
  v.a_file = ta.section ? ta.section->files.front() : "";
  v.b_file = tb.section ? tb.section->files.front() : "";
  v.summary = "rank 0: " + d.summary;
  for (const trace::CategoryDelta& c : d.categories)
    v.categories.push_back({c.category, Ms(c.base_us), Ms(c.test_us), Ms(c.delta_us), Pct(c.base_share), Pct(c.test_share)});
  for (size_t i = 0; i < d.ops.size() && i < 5; ++i)
    v.ops.push_back({trace::CutUtf8(d.ops[i].name, 80), R3(d.ops[i].base_us / 1000), R3(d.ops[i].test_us / 1000), R3(d.ops[i].delta_us / 1000)});
  v.a_straggler = Verdict(ta.analyses);
  v.b_straggler = Verdict(tb.analyses);
  return v;
}

}  // namespace mt::tools
