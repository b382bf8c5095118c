// The TensorBoard scalars MaxText writes after every step (tags learning/* and perf/*), and
// their Prometheus names as the tb plugin derives them (reference §5.4).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "launcher/sim/scenario.h"
#include "launcher/sim/timeline.h"

namespace mt::launch::sim {

// (tag, value) pairs for one step, in the order MaxText writes them.
std::vector<std::pair<std::string, double>> StepScalars(const Scenario& s, const StepRecord& r);

// "learning/loss" -> "tb_learning_loss": every char outside [A-Za-z0-9_] becomes '_'.
std::string TbMetricName(const std::string& tag);

// wall_time of the events written for a step: MaxText writes them just after the step ends.
inline double StepWallTime(const StepRecord& r) { return r.end + 0.05; }

}  // namespace mt::launch::sim
