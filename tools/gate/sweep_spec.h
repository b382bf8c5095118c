// A CI regression sweep's specification (mt sweep --spec FILE): which models run on how
// many nodes, with which scheduler and passthrough arguments, and what counts as a
// regression. YAML, e.g. configs/sweeps/ci-smoke.yaml:
//
//   name: ci-smoke
//   backend: slurm                 # local | slurm
//   scheduler: [-p, ci, --time=20]
//   passthrough: [steps=30, dataset_type=synthetic]
//   threshold_pct: 5               # steady-TGS drop that fails the sweep
//   warmup_steps: 5
//   timeout_s: 1800                # for the whole sweep
//   runs:
//     - model: llama2-70b
//       nodes: [1, 2]
//     - model: mixtral-8x22b
//       nodes: [1]
//       passthrough: [per_device_batch_size=4]
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace mt::tools {

struct SweepRun {
  std::string model;                       // a model spec as `mt submit` takes it
  std::vector<int> nodes;                  // one run per node count
  std::vector<std::string> passthrough;    // added after the sweep-wide passthrough
};

struct SweepSpec {
  std::string name = "sweep";
  std::string backend = "slurm";
  std::vector<std::string> scheduler_args;
  std::vector<std::string> passthrough;
  double threshold_pct = 5;
  int warmup_steps = 5;
  int timeout_s = 1800;
  std::vector<SweepRun> runs;
};

// Throws std::runtime_error starting with `where` and naming the key that is wrong.
SweepSpec ParseSweepSpec(const std::string& yaml_text, const std::string& where);
SweepSpec LoadSweepSpec(const std::filesystem::path& file);

}  // namespace mt::tools
