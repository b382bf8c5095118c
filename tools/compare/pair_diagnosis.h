// compare_jobs' machine-readable verdict on a pair: did a host metric differ between the
// two jobs beyond noise (`significant`), through which fault family, on which hosts.
//
// Only host metrics whose size matters in known units count (hw_*, ray_node_* with a
// MetricFloor: temperature, retransmits, I/O pressure, runnable threads, ...); training
// scalars (tb_learning_*) follow the
// configuration — a different node count changes the global batch and with it the weights
// per step — and throughput has its own comparison (tgs). A difference is either uniform
// (every common host moved the same way, the between-job test of compare_tsdb.h) or sits
// on particular hosts that stand out from their own job and from every host of the other.
#pragma once
#include "tools/compare/compare_answer.h"
#include "tools/compare/compare_tsdb.h"

namespace mt::tools {

PairVerdict PairDiagnosis(const ContentionSweepResult& sweep, bool tsdb_used);

}  // namespace mt::tools
