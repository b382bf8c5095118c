// Perturbations the scenario generator (scenario_fuzz.h) lays over the metrics the model
// (metrics_model.h) produced: faults the model has no kind for (TCP retransmits, I/O stall,
// CPU contention, a host OOM, a node that stops reporting while the job hangs) and decoys
// (noisy or hot hosts, missing series, counter resets, scrape gaps, a host that joins late).
//
// It works on the OpenMetrics text the writer emits, one sample line at a time, so the
// model stays untouched and every sample still has the exporter's metric name and labels.
// Files must be fed in time order (the writer's windows are): counters keep their offsets
// from one file to the next.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mt::launch::sim {

struct Effect {
  enum class Op {
    kAdd,    // gauge + value
    kSet,    // gauge = value
    kRamp,   // gauge moves linearly from its own value at t0 to `value` at t1, and stays
    kRate,   // counter grows by value per second inside [t0, t1]
    kStep,   // counter + value from t0 on
    kReset,  // counter restarts from 0 at t0 (an exporter restart)
    kDrop,   // no samples inside [t0, t1]; `up` reads 0 there
  };
  Op op = Op::kAdd;
  std::string metric;       // exact metric name, a prefix ending in '*', or "*" for all
  std::string host;         // the host label value
  std::string label_match;  // optional: a substring the label set must contain (device="ionic_1")
  double t0 = -1e18, t1 = 1e18;
  double value = 0;
  double noise = 0;         // ± uniform noise on the added / set value
};

// An effect on one host's metric over [t0, t1].
Effect MakeEffect(Effect::Op op, const std::string& metric, const std::string& host, double t0, double t1,
                  double value, double noise = 0);

class Overlay {
 public:
  Overlay(uint64_t seed, std::vector<Effect> effects) : seed_(seed), effects_(std::move(effects)) {}
  bool empty() const { return effects_.empty(); }
  // Rewrites one OpenMetrics file (comments kept, samples changed or dropped).
  std::string Apply(const std::string& text);

 private:
  struct CounterState {
    double offset = 0;       // added so far
    double reset_base = -1;  // raw value at the reset (-1: none yet)
    double last_t = -1;
  };
  bool ApplyLine(const std::string& head, const std::string& name, const std::string& labels, double t, double* v);
  uint64_t seed_;
  std::vector<Effect> effects_;
  std::map<std::string, CounterState> counters_;
  std::map<std::string, double> ramp_start_;   // series head + effect index → value at t0
};

}  // namespace mt::launch::sim
