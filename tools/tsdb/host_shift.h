// The statistical core of host attribution: does a host's signal move with the symptom?
//
// For one slow segment and one signal (one series per host): each host's shift is the
// median of its samples inside the segment minus the median of its own healthy samples
// (its baseline). What the hosts share (the lower quartile of the shifts) is the workload
// changing, not a host; what is left (the excess) is judged against the host's own noise
// (the spread of the medians of five-sample blocks of its baseline: a level's noise, not a
// single sample's; drift widens it), the spread of the unmoved hosts' shifts and the
// family's floor (the smallest shift that matters in its units). Quantiles and MADs only: a few culprits, a scrape gap
// or a counter reset move none of them.
//
// A host with no healthy samples (it joined late) is compared with the other hosts inside
// the segment instead, under a stricter rule, since nothing shows it moved with the symptom.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tools/tsdb/tsdb_series.h"
#include "tools/tsdb/tsdb_symptom.h"

namespace mt::tools {

struct HostSeries {
  std::string host;
  std::vector<TsdbPoint> points;   // ascending time
};

struct HostShift {
  std::string host;
  double baseline = 0, during = 0;   // medians
  double shift = 0;                  // during - baseline
  double excess = 0;                 // shift - the median shift of all hosts
  double noise = 0;                  // how much the baseline's level varies (LevelNoise)
  double score = 0;                  // excess / max(noise, spread, floor / 4)
  bool own_baseline = true;          // false: judged against the other hosts only
  bool culprit = false;
  double onset = 0;                  // first sample in the segment past half the excess
  const std::vector<TsdbPoint>* points = nullptr;   // the host's series (owned by the caller)
};

struct SegmentShifts {
  std::vector<HostShift> hosts;      // hosts with samples in the segment
  double median_shift = 0, spread = 0, median_noise = 0;
  // What the hosts that did not move share: the lower quartile of the shifts, so that up
  // to three hosts in four may be culprits (the median is a culprit's own shift once half
  // the hosts are). The spread is that of the lower half (LowerHalfSpread).
  double common_shift = 0;
  double moved_share = 0;            // share of hosts whose own shift reaches half the floor
  bool uniform = false;              // the shift is shared: median ≥ floor, ≥ 4 noise, ≥ 80 % moved
  double uniform_score = 0;          // median_shift / max(median noise, floor / 4)
};

// Minimum score (and minimum excess, in floors) for a culprit; stricter without an own baseline.
constexpr double kCulpritScore = 5;
constexpr double kCulpritScoreNoBaseline = 10;

SegmentShifts ShiftsInSegment(const std::vector<HostSeries>& series, const Symptom& symptom, const SlowSegment& segment,
                              double floor, double margin);

}  // namespace mt::tools
