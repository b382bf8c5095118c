// The ranks of one job side by side: which rank the others wait for. In a synchronous
// data-parallel step every rank waits at the collective for the slowest; the slowest rank
// itself hardly waits. So a rank's "own" share of the step (1 − exposed-communication
// share: computing, copying, or idle on the host) is highest on the straggler, and the
// others' exposed communication is the time it costs them. Works the same on GPU traces
// (NCCL kernels) and CPU-only ones (gloo spans), and does not need the ranks' clocks to be
// aligned (Debian's torch writes each rank's trace from its own zero).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/trace/trace_analysis.h"

namespace mt::tools::trace {

struct RankFigures {
  std::string file;
  int64_t rank = 0;
  std::string rank_source;              // distributedInfo | file name | position
  std::optional<double> step_time_us, own_share, exposed_comm_share, compute_share, idle_share;
};

struct StepSlowest {
  std::string step;                     // ProfilerStep#N, present on every rank
  int64_t rank = 0;                     // the rank with the most own time in that step
  double own_us = 0, next_own_us = 0;   // its own time and the runner-up's
};

struct CollectiveSkew {
  std::string kind;
  // Per rank, the kind's total time per steady step; the least is the closest to the pure
  // transfer (that rank arrived last and waited least); the rest is waiting for peers.
  int64_t least_rank = 0, most_rank = 0;
  double least_us = 0, most_us = 0;
};

struct RankComparison {
  std::vector<RankFigures> ranks;       // by rank
  std::string verdict;                  // straggler | balanced | unknown
  std::optional<int64_t> straggler;     // the rank, when verdict is straggler
  double lead = 0;                      // the straggler's own share minus the next rank's
  double others_exposed_comm_share = 0; // mean exposed-communication share of the other ranks
  std::string why;                      // one sentence with the figures
  std::vector<StepSlowest> per_step;
  std::vector<CollectiveSkew> collectives;
};

// A rank is named only when its own share leads the next rank's by at least `min_lead`
// and the others wait at least `min_wait` of their step on average.
struct StragglerRule {
  double min_lead = 0.10, min_wait = 0.10;
};

// The rank of a trace: distributedInfo.rank, else the number after "rank" in the file name
// ("rank1.pt.trace.json.gz", "trace_rank-3.json"), else its position in `analyses`.
int64_t RankOf(const TraceAnalysis& a, size_t position, std::string* source = nullptr);
RankComparison CompareRanks(const std::vector<TraceAnalysis>& analyses, const StragglerRule& rule = {});

}  // namespace mt::tools::trace
