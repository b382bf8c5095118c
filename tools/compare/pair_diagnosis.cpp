#include "tools/compare/pair_diagnosis.h"

#include <set>

#include "tools/tsdb/tsdb_attribution.h"
#include "tools/tsdb/tsdb_context.h"
#include "tools/tsdb/tsdb_series.h"

namespace mt::tools {

PairVerdict PairDiagnosis(const ContentionSweepResult& sweep, bool tsdb_used) {
  PairVerdict out;
  out.family = tsdb_used ? "none" : "unknown";
  if (!tsdb_used) {
    out.why = "no TSDB comparison: the logs alone cannot attribute a difference to hosts";
    return out;
  }
  // The strongest significant host metric whose size we can judge in its units (a
  // MetricFloor): a job-wide 15 % change in congestion notifications or writeback bytes
  // between two runs is the kind of drift every rerun has, listed in metrics[] but no
  // diagnosis.
  const MetricComparison* top = nullptr;
  for (const auto& m : sweep.metrics)
    if (m.significant && m.kind == "contention" && MetricFloor(m.metric) > 0 && (top == nullptr || m.score > top->score)) top = &m;
  if (top == nullptr) {
    out.why = "no host metric differs beyond noise between the jobs";
    return out;
  }
  const std::string family = FamilyOfMetric(top->metric);
  out.significant = true;
  out.family = family;
  out.uniform = top->pattern == "uniform";
  if (top->pattern == "uniform") {
    out.why = top->metric + " moved from " + Num(top->a) + " to " + Num(top->b) + " (median over hosts)" +
                 (top->hosts_consistent ? " on every common host" : "") + ": a cause the hosts share, no host to blame";
    return out;
  }
  // Hosts that stand out in the family's significant metrics.
  std::set<std::string> seen;
  for (const auto& m : sweep.metrics) {
    if (!m.significant || m.pattern != "hosts" || FamilyOfMetric(m.metric) != family || MetricFloor(m.metric) <= 0) continue;
    for (const auto& [h, v] : m.hosts) {
      if (!seen.insert(h).second) continue;
      const double confidence = Confidence(m.score, 8);   // the host test's bar: 8 noise units (compare_tsdb.h)
      out.culprits.push_back(PairCulprit{h, family, m.hosts_in, m.metric, Round(v), Round(m.hosts_in == "a" ? m.b : m.a),
                                         confidence});
    }
  }
  out.why = top->metric + " stands out on " + std::to_string(out.culprits.size()) +
               " host(s) against their own job and every host of the other";
  return out;
}

}  // namespace mt::tools
