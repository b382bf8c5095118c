// The jax.profiler capture of a simulated MaxText run: node 0's `<host>.xplane.pb` under
// <tensorboard_dir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/, covering profile.steps steps
// from profile.first_step, in the real XSpace wire format (xplane_writer.h).
//
// What is in it (the layout jax.profiler saves; nothing xprof derives later):
//  - `/host:CPU`: per device a `Host Threads/<tid>` line with the step annotation
//    ("train", step_num = N, the span of the step) and one graph launch per layer pass,
//    each with a correlation_id;
//  - `/device:GPU:<g>` for each GPU of the node: a compute stream (`Stream #<id>`) with
//    the layer's kernels (hipBLASLt FP8 GEMMs, flash attention, XLA fusions) and a
//    collective stream with RCCL kernels (`ncclDevKernel_Generic_1(...)`, hlo_op
//    all-gather-start / reduce-scatter), with correlation_id, hlo_op, hlo_module,
//    program_id and kernel_details stats.
//
// Timing model, per step of length T (the step's own time in the run): compute kernels take
// compute_share × T (forward : backward = 1 : 2 over the layers), a collective per layer
// pass overlaps the end of the pass's compute and runs past it by the exposed share, and
// what is left is idle at the start and end of the step. Collectives finish together on
// every GPU (the last to arrive sets the end), so a slow GPU (profile.slow_gpu) waits
// less than the others: the straggler signature the analyses look for.
#pragma once
#include <filesystem>

#include "base/status.h"
#include "launcher/sim/scenario.h"
#include "launcher/sim/timeline.h"

namespace mt::launch::sim {

// Writes the trace when s.profile_steps > 0 and those steps ran; `written` is the file (or
// empty when none is due).
base::Status WriteProfileTrace(const Scenario& s, const Timeline& tl, const std::filesystem::path& tensorboard_dir,
                               std::filesystem::path* written);

}  // namespace mt::launch::sim
