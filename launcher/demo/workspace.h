// The case-study workspace: every seed case study as a complete job directory, generated
// deterministically from the scenarios in configs/scenarios/ (compiled into the binary).
//
//   7877  24 x 8 GPUs, collective hang after step 3,841 of a 35 h run (power 900 W -> 300 W at 100 % util)
//   8308  24 nodes, RDMA retransmits on chi2822/chi2834/chi2835/chi2882, TGS 3,293 / 2,620 / 3,288 / 2,520
//   8309  the same run with those four nodes excluded, TGS ~3,287
//   8043  heartbeat false positive at step 71: tasks 8 and 10 accused, 900 s timeout, crash 19:21:00
//   8101  job A: fresh start, TGS ~3,295, hw_procs_running ~18 per host
//   8102  job B: single-replica checkpoint restore, TGS ~3,261, hw_procs_running ~35 per host
//   7938  MoE run whose TGS declines from step ~450 while tb_learning_moe_lb_loss spikes
//   8104  healthy llama3.1-405b FP8 run, 8 nodes x 8 GPUs (case study 0)
//   8105  short run that dies of GPU OOM during compilation
//
// `mt demo init DIR` and `mt-simtrain --demo-init DIR` both call InitWorkspace.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace mt::launch::demo {

struct InitOptions {
  std::string promtool;                 // empty: $MT_PROMTOOL, else "promtool" on PATH
  int parallel = 2;                     // concurrent promtool processes
  std::vector<std::string> only;        // job ids to generate; empty = all case studies
  bool with_tsdb = true;                // false: everything but the Prometheus blocks
  std::function<void(const std::string&)> progress;  // optional: one line per finished job
};

/** Creates the case-study workspace under dir: kInvalid for a bad dir or job id, else the
 *  generator's errors (launcher/sim/job_writer.h).
 *  `dir` must not exist or be an empty directory. The workspace is built next to it
 *  (`<dir>.partial-<pid>`) and renamed into place, so a failure leaves nothing behind. */
base::Status InitWorkspace(const std::filesystem::path& dir, const InitOptions& opts);

/** Job ids of the case studies, in generation order. */
std::vector<std::string> DemoJobIds();

}  // namespace mt::launch::demo
