// Throughput phases: change-point segmentation of Tokens/s/device over training steps.
//
// A job whose TGS falls from ~3,293 to ~2,620, recovers to ~3,288 and falls again to
// ~2,520 (seed case 8308) has four phases, and the shape says where to look: a constant
// drop points at RDMA retransmits, phases that come and go at nodes taking turns, a
// gradual slide at a leak or contention, periodic dips at checkpoints.
//
// Method: the first 5 steps are warm-up (compile, caches) and never start a phase of
// their own; isolated spikes (checkpoint saves) are replaced by the local median (Hampel
// filter, window 7) so that they do not split phases; then binary segmentation on the
// squared-error cost, splitting while the gain beats a BIC-style penalty built from a
// robust noise estimate, with segments of at least 5 steps; finally neighbouring phases
// whose means differ by less than 3 % are merged.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mcp/typed.h"

namespace mt::tools {

struct TgsPoint {
  int64_t step = 0;
  double tgs = 0;
};

struct TgsPhase {
  int64_t start_step = 0, end_step = 0;   // inclusive
  size_t steps = 0;                        // points in the phase (warm-up excluded)
  double mean = 0, std = 0;
  double change_pct = 0;                   // vs the previous phase (0 for the first)

  template <class F>
  static void Fields(F& f) {
    f("start_step", &TgsPhase::start_step);
    f("end_step", &TgsPhase::end_step);
    f("steps", &TgsPhase::steps);
    f("mean", &TgsPhase::mean);
    f("std", &TgsPhase::std);
    f("change_pct", &TgsPhase::change_pct, {.description = "vs the previous phase, percent"});
  }
};

struct TgsAnalysis {
  size_t points = 0;
  size_t warmup_steps = 0;                 // excluded from the statistics
  std::vector<TgsPhase> phases;
  std::vector<int64_t> spikes;             // steps replaced by the local median
  // Early steady mean (the 10 steps after warm-up) and the mean of the last 10 steps.
  double steady_mean = 0, tail_mean = 0;
  double degradation_pct = 0;              // (steady - tail) / steady * 100
  bool degraded = false;                   // tail more than 10 % below steady
  // stable | constant_drop | phased | gradual | one_time | improved | insufficient_data
  std::string pattern;
  // When the first change is a decline: the step where it starts (for a gradual slide
  // this is earlier than the first phase boundary, which waits for a 3 % difference).
  std::optional<int64_t> decline_onset_step;
};

TgsAnalysis AnalyzeTgs(std::vector<TgsPoint> points);

}  // namespace mt::tools
