// Figures of one profiler trace, defined exactly as tests/traces/trace_oracle.py defines
// them (its docstring is the long form; docs/tools/perf_analysis.md the user's form):
//
//  - steps: the CPU `ProfilerStep#N` spans; GPU activity (kernels, memcpy, memset) belongs
//    to the step whose CPU span holds its launch (correlation id, else a flow at the event,
//    else the External id), or its own start when fewer than half of the events link.
//  - per step (GPU traces), over the step's own GPU events, all streams merged: window =
//    first start to last end; compute = |∪ non-NCCL/RCCL kernels|, comm = |∪ NCCL/RCCL
//    kernels|, exposed comm = |comm ∪ − compute ∪|, exposed memcpy/memset, idle = window −
//    |∪ all|. CPU-only traces (gloo): the training thread's depth-0 ops are compute, the
//    collectives' spans on the rank's threads are communication, the window is the CPU span.
//  - steady: all steps but the first when there are 3 or more, empty steps left out.
//  - top kernels (GPU) or CPU ops (CPU-only), collectives by kind with achieved bus bandwidth.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/trace/trace_file.h"

namespace mt::tools::trace {

struct Shares {
  double compute = 0, comm = 0, exposed_comm = 0, memcpy_memset_exposed = 0, idle = 0;
};

struct StepFigures {
  std::string name;
  double cpu_ts = 0, cpu_dur_us = 0;
  std::optional<double> window_start, window_end;
  double step_time_us = 0, compute_us = 0, comm_us = 0, exposed_comm_us = 0;
  double memcpy_memset_us = 0, memcpy_memset_exposed_us = 0, busy_us = 0, idle_us = 0;
  std::optional<Shares> shares;          // absent for an empty window
  int64_t gpu_events = -1;               // GPU traces
  int64_t compute_ops = -1, comm_ops = -1, backend_comm_ops = -1;   // CPU-only traces
};

struct SteadyFigures {
  std::string rule;
  std::vector<std::string> steps;
  std::optional<double> step_time_us, cpu_dur_us, compute_us, comm_us, exposed_comm_us,
      memcpy_memset_us, memcpy_memset_exposed_us, idle_us;   // means; absent without steps
  std::optional<Shares> shares;          // means of the per-step shares
};

struct OpTotal {
  std::string name;                      // cut to 120 bytes (at a UTF-8 boundary)
  int64_t count = 0;
  double total_us = 0, mean_us = 0;
};

struct CollectiveFigures {
  std::string kind;                      // AllReduce, AllGather, SendRecv, …
  int64_t count = 0;
  double total_us = 0;
  int64_t sized_count = 0, bytes = 0;
  double sized_us = 0;
  std::optional<int64_t> group_size;
  std::optional<double> algbw_gbps, busbw_gbps;
  std::string busbw_formula;             // empty when there is no bus bandwidth
  std::string counted_from;              // CPU-only traces: where count/total come from
  std::vector<OpTotal> by_name;          // sorted by name
};

struct LinkFigures {
  int64_t gpu_events = 0, by_correlation = 0, by_flow = 0, by_external_id = 0, unlinked = 0;
  double share = 0;
  std::string method;                    // launch_in_cpu_span | ts_in_cpu_span
  int64_t in_no_step = 0;
};

struct TraceAnalysis {
  std::string file;                      // base name
  std::string mode;                      // gpu | cpu
  std::string format;                    // kineto | legacy | xplane
  int64_t events = 0, bad_x = 0, duplicate_steps = 0, gpu_steps = 0;
  std::optional<int64_t> rank, world_size;   // distributedInfo
  std::vector<StepFigures> per_step;
  SteadyFigures steady;
  std::optional<LinkFigures> links;
  std::vector<OpTotal> top;              // at most 10
  std::vector<OpTotal> ops;              // the same ranking, at most 200 (for trace diffs)
  std::string top_source;
  std::vector<CollectiveFigures> collectives;  // sorted by kind
  int64_t cpu_step_overlaps = 0;
  std::optional<int64_t> gpu_window_overlaps;
  std::vector<std::string> steps_without_comm;
  std::vector<std::string> notes;
  std::optional<std::pair<std::string, std::string>> training_thread;   // CPU-only: (pid, tid) keys
};

TraceAnalysis AnalyseTrace(const TraceFile& trace, const std::string& file_name);

}  // namespace mt::tools::trace
