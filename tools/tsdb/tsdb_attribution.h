// Which hosts caused the symptom, and through which fault family: the answer's `family`
// and `culprits` fields (query_tsdb playbook auto).
//
// Method (docs/tools/query_tsdb.md explains it with its measured accuracy):
//  - the symptom in wall time (tsdb_symptom.h): slow throughput phases, or a stop;
//  - whether the store holds the data to judge (store_coverage.h): samples that end
//    before the symptom leave it `unknown`;
//  - hosts that stopped reporting (`up` 0 or no samples at the end while the others go
//    on), or whose GPUs logged uncorrectable / fatal errors → node_death (a host whose
//    samples end without a failed scrape on record is blamed with less confidence: its
//    agent may have stopped instead); then
//  - for a stop: OOM kills or memory at its limit → host_oom; every GPU
//    still spinning and nobody gone → collective_hang (no host to blame from metrics);
//  - for a slowdown: per family (thermal, rdma, tcp, io_stall, cpu_contention) a per-host
//    signal; each host's shift from its OWN healthy baseline into each slow phase, minus
//    the shift the unmoved hosts share (what moved everywhere is the workload, not a host),
//    judged against the host's own noise, the spread of the other hosts and a floor in
//    the family's units. A host noisy since before the slowdown does not shift; one that
//    moves with the slowdown does. A shift shared by nearly every host is a uniform cause;
//  - no family lines up with a slowdown: the training itself (MoE load balance, loss)
//    when its scalars move at the onset, else `unknown` with what would decide.
// Every threshold is in units the method measures (noise, spread, a family floor), never
// a host count, a time or a value taken from one scenario.
#pragma once
#include <string>
#include <vector>

#include "mcp/json.h"
#include "tools/tsdb/query_answer.h"
#include "tools/tsdb/store_coverage.h"
#include "tools/tsdb/tsdb_context.h"
#include "tools/tsdb/tsdb_symptom.h"

namespace mt::tools {

struct Culprit {
  std::string host, family, metric;
  double onset = 0;          // when the host's signal first left its baseline
  double baseline = 0, during = 0;   // the host's signal before and during the symptom
  double score = 0;          // the shift in units of max(noise, spread, floor)
  double confidence = 0;     // 0..1, grows with the score
};

struct FamilyCheck {
  std::string family, signal, verdict;   // verdict: aligned | uniform | quiet | no_data | missing
  std::vector<std::string> hosts;        // hosts whose signal moved with the symptom
  double score = 0;                      // the strongest aligned shift (units as above)
  double median_shift = 0;               // the shift every host shares
  std::string missing;                   // verdict missing: why the store lacks the signal
};

struct Attribution {
  Symptom symptom;
  std::string family = "unknown";   // none | thermal | rdma | tcp | io_stall | cpu_contention |
                                    // node_death | host_oom | collective_hang | training | unknown
  bool uniform = false;             // the cause sits on every host alike
  std::vector<Culprit> culprits;
  std::vector<FamilyCheck> checks;
  std::string why;                  // why this family, in one or two sentences
  std::string undecided;            // for `unknown`: what would decide it
  StoreCoverage coverage;           // whether the store holds the job's data (gaps, staleness)
};

Attribution Attribute(TsdbContext& tsdb, const Json& triage);

// A score against the bar it had to clear, as 0..0.99: 0.5 at the bar, 0.94 at four times it.
double Confidence(double score, double bar);

// The fault family a host metric speaks for (hw_rdma_* → rdma, hw_procs_running →
// cpu_contention, ...); "other" for metrics no family claims.
std::string FamilyOfMetric(const std::string& metric);

// The smallest difference of a host metric that matters, in its units (per second for
// counters): 6 °C, 5 retransmits/s, 5 % of time stalled on I/O, 4 runnable threads...;
// 0 for metrics without one (only relative and noise tests apply to them).
double MetricFloor(const std::string& metric);

// The playbook that expands a family's evidence (thermal → gpu_health, ...).
std::string PlaybookForFamily(const std::string& family);

// playbook auto: triage's class decides when it names a specific playbook and the metrics
// blame no host; otherwise (triage unsure, or hosts to blame) the attributed family does.
struct PlaybookChoice {
  std::string playbook, because;
};
PlaybookChoice ChooseAutoPlaybook(const Attribution& a, const std::string& triage_class);

// Fills the answer's playbook-auto part: family, uniform, culprits and attribution.
void AddAttribution(const Attribution& a, TsdbContext& tsdb, QueryAnswer* answer);

}  // namespace mt::tools
