// Real-time mode: a fake procfs/sysfs tree for one simulated node, rewritten as the run goes,
// laid out like the kernel's so that mt-exporter --root DIR (and the original plugins, with
// paths prefixed) read the simulated node exactly as they read a real one. The file list is
// in docs/simtrain.md ("Fake root layout").
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"
#include "launcher/sim/metrics_model.h"

namespace mt::launch::sim {

class FakeRoot {
 public:
  // `root` is the node's "/"; `host` indexes the scenario's host list.
  FakeRoot(const MetricsModel& model, std::filesystem::path root, int host);

  // Creates the directory skeleton, symlinks and constant files (kIo when it cannot).
  base::Status Init();
  // Rewrites every changing file (each via temp file + rename, so readers never see a torn
  // file) with the values at time t; counters advance by their increase over dt.
  base::Status Update(double t, double dt, uint64_t k);

 private:
  base::Status Write(const std::string& rel, const std::string& data) const;
  std::string GpuDir(int gpu) const;
  const MetricsModel& m_;
  std::filesystem::path root_;
  int host_;
  std::vector<size_t> series_;     // indices into m_.series() for this host
  std::vector<double> counter_;    // per entry of series_
  bool started_ = false;
};

}  // namespace mt::launch::sim
