// Random scenarios with ground truth, to measure diagnosis on clusters the methods were not
// fitted to (`mt-simtrain --scenario-fuzz SEED --out DIR`). Every choice comes from the seed:
// cluster size (4–64 hosts), host-naming scheme, start time, step time, scrape interval,
// GPUs and NICs per node, the fault family, its hosts, onset step, duration and magnitude,
// and decoys (noisy or hot hosts that were like that before the fault, missing series,
// counter resets, scrape gaps, a host that joins late). A seed gives either one job or a
// pair of jobs for compare_jobs.
//
// DIR becomes a workspace holding the job(s) and truth.json, which names the family, the
// culprit hosts, the onset (step and time), the magnitude and the decoys.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"
#include "launcher/sim/fuzz_overlay.h"
#include "launcher/sim/promtool.h"
#include "launcher/sim/scenario.h"

namespace mt::launch::sim {

// The families the truth names (and the tools are scored on).
//   none, thermal, rdma, tcp, collective_hang, node_death, host_oom, io_stall,
//   cpu_contention, training
struct FuzzJob {
  Scenario scenario;
  std::vector<Effect> effects;   // laid over the model's metrics (fuzz_overlay.h)
};

struct FuzzCase {
  uint64_t seed = 0;
  std::vector<FuzzJob> jobs;     // one, or two for a pair (A first)
  std::string truth_json;        // what truth.json holds
};

// Deterministic: the same seed always gives the same case.
FuzzCase MakeFuzzCase(uint64_t seed);

// Writes the case's job(s) (log, TFEvents, promtool-built TSDB with the overlay applied)
// and truth.json into `out` (created if missing): GenerateJob's errors, kFailed when promtool fails.
base::Status WriteFuzzCase(const FuzzCase& c, const std::filesystem::path& out, const PromtoolOptions& promtool);

}  // namespace mt::launch::sim
