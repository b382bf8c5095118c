// Compressed-time generation of one complete job directory in a workspace, laid out as
// reference/maxtext-slurm.md §2.3 says the original launcher leaves it:
//
//   <ws>/.artifacts/artifact_<YYYYmmdd_HHMMSS>_<4hex>/{submit_cmd.txt,git_summary.txt,configs/…}
//   <ws>/<id>-<name>.log
//   <ws>/<id>-<name>/
//       artifact -> ../.artifacts/artifact_…      log -> ../<id>-<name>.log
//       prometheus/<ULID blocks>, prometheus.log, ray_prometheus.yml
//       metrics_exporter/<host>.log                ray_logs/<head>/worker-…-<pid>.out
//       <run_name>/tensorboard/<run_name>/events.out.tfevents.<epoch>.<head>
//
// Everything is built in a temporary directory inside the workspace and renamed into place,
// so a failure leaves nothing behind.
#pragma once

#include <filesystem>
#include <string>

#include "base/status.h"
#include "launcher/sim/openmetrics_writer.h"
#include "launcher/sim/promtool.h"
#include "launcher/sim/scenario.h"

namespace mt::launch::sim {

struct GenerateOptions {
  PromtoolOptions promtool;
  bool with_tsdb = true;            // false: skip promtool (unit tests of the other files)
  bool keep_openmetrics = false;    // keep the .om files in <job>/prometheus-openmetrics/
};

struct GenerateResult {
  std::filesystem::path log_path;
  std::filesystem::path job_dir;
  std::filesystem::path event_file;
  OpenMetricsStats metrics;
};

// kConflict when the job (or its artifact) exists already, kNotDirectory for a missing
// workspace, kFailed when promtool fails, else the file-system error; nothing is left behind.
base::Status GenerateJob(const Scenario& s, const std::filesystem::path& workspace, const GenerateOptions& opts,
                         GenerateResult* result);

}  // namespace mt::launch::sim
