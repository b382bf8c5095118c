// perf_analysis's answer as types: the tool's outputSchema and its JSON both come from
// these field lists (mcp/typed.h). The meaning of each field is in docs/tools/perf_analysis.md.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mcp/typed.h"
#include "tools/common/tgs_phases.h"

namespace mt::tools {

using mcp::Nullable;

struct PerfJobView {
  std::string id, name, log;
  Nullable<std::string> dir, model;
  Nullable<int64_t> nodes;
  template <class F>
  static void Fields(F& f) {
    f("id", &PerfJobView::id);
    f("name", &PerfJobView::name);
    f("log", &PerfJobView::log);
    f("dir", &PerfJobView::dir);
    f("model", &PerfJobView::model);
    f("nodes", &PerfJobView::nodes);
  }
};

struct PerfSteps {
  Nullable<int64_t> first, last;
  int64_t logical = 0;
  double entries_per_step = 0;
  int64_t warmup_steps = 0;
  template <class F>
  static void Fields(F& f) {
    f("first", &PerfSteps::first);
    f("last", &PerfSteps::last);
    f("logical", &PerfSteps::logical, {.description = "logical training steps (a step printed by N ranks counts once)"});
    f("entries_per_step", &PerfSteps::entries_per_step);
    f("warmup_steps", &PerfSteps::warmup_steps);
  }
};

struct PerfSteady {
  Nullable<double> tgs;
  double tgs_std = 0;
  Nullable<double> step_seconds, tflops_per_device, mfu_pct;
  Nullable<int64_t> first_step, last_step;
  template <class F>
  static void Fields(F& f) {
    f("tgs", &PerfSteady::tgs, {.description = "steady-window mean tokens/s/device"});
    f("tgs_std", &PerfSteady::tgs_std);
    f("step_seconds", &PerfSteady::step_seconds);
    f("tflops_per_device", &PerfSteady::tflops_per_device);
    f("mfu_pct", &PerfSteady::mfu_pct);
    f("first_step", &PerfSteady::first_step);
    f("last_step", &PerfSteady::last_step);
  }
};

struct MfuSource {
  Nullable<std::string> source;   // log | computed
  Nullable<std::string> gpu;
  std::string dtype;
  Nullable<double> peak_tflops;
  Nullable<std::string> peak_source;
  template <class F>
  static void Fields(F& f) {
    f("source", &MfuSource::source, {.one_of = {"log", "computed"}});
    f("gpu", &MfuSource::gpu);
    f("dtype", &MfuSource::dtype);
    f("peak_tflops", &MfuSource::peak_tflops);
    f("peak_source", &MfuSource::peak_source);
  }
};

struct StatView {
  int64_t n = 0;
  double mean = 0, std = 0, p50 = 0, p99 = 0, min = 0, max = 0;
  template <class F>
  static void Fields(F& f) {
    f("n", &StatView::n);
    f("mean", &StatView::mean);
    f("std", &StatView::std);
    f("p50", &StatView::p50);
    f("p99", &StatView::p99);
    f("min", &StatView::min);
    f("max", &StatView::max);
  }
};

struct PerfWindowView {
  std::string name;
  Nullable<int64_t> first_step, last_step;
  Nullable<StatView> tgs, step_seconds;
  template <class F>
  static void Fields(F& f) {
    f("name", &PerfWindowView::name, {.one_of = {"warmup", "steady", "tail"}});
    f("first_step", &PerfWindowView::first_step);
    f("last_step", &PerfWindowView::last_step);
    f("tgs", &PerfWindowView::tgs);
    f("step_seconds", &PerfWindowView::step_seconds);
  }
};

struct JitterView {
  double tgs_cv_pct = 0, step_seconds_cv_pct = 0;
  Nullable<double> step_seconds_p99_over_p50;
  template <class F>
  static void Fields(F& f) {
    f("tgs_cv_pct", &JitterView::tgs_cv_pct);
    f("step_seconds_cv_pct", &JitterView::step_seconds_cv_pct);
    f("step_seconds_p99_over_p50", &JitterView::step_seconds_p99_over_p50);
  }
};

struct LossTrend {
  std::optional<double> first, last, min, slope_per_100_steps;   // absent when every loss is NaN
  int64_t nan_steps = 0;
  std::string trend;
  template <class F>
  static void Fields(F& f) {
    f("first", &LossTrend::first);
    f("last", &LossTrend::last);
    f("min", &LossTrend::min);
    f("slope_per_100_steps", &LossTrend::slope_per_100_steps);
    f("nan_steps", &LossTrend::nan_steps);
    f("trend", &LossTrend::trend, {.one_of = {"flat", "decreasing", "increasing", "nan"}});
  }
};

struct OverheadView {
  bool detected = false;
  int64_t spikes = 0;
  Nullable<int64_t> period_steps;
  double median_step_seconds = 0, extra_seconds_per_spike = 0, overhead_pct = 0;
  int64_t at_checkpoints = 0;
  std::vector<int64_t> spike_steps;
  template <class F>
  static void Fields(F& f) {
    f("detected", &OverheadView::detected);
    f("spikes", &OverheadView::spikes);
    f("period_steps", &OverheadView::period_steps);
    f("median_step_seconds", &OverheadView::median_step_seconds);
    f("extra_seconds_per_spike", &OverheadView::extra_seconds_per_spike);
    f("overhead_pct", &OverheadView::overhead_pct);
    f("at_checkpoints", &OverheadView::at_checkpoints);
    f("spike_steps", &OverheadView::spike_steps, {.description = "the first 12 spike steps"});
  }
};

struct ProfileRunView {
  std::string dir;
  int64_t xplane_files = 0, bytes = 0;
  std::vector<std::string> files;
  template <class F>
  static void Fields(F& f) {
    f("dir", &ProfileRunView::dir);
    f("xplane_files", &ProfileRunView::xplane_files);
    f("bytes", &ProfileRunView::bytes);
    f("files", &ProfileRunView::files);
  }
};

struct CollectiveKindView {
  std::string op;
  int64_t count = 0, async = 0, sync = 0, bytes = 0, max_bytes = 0;
  template <class F>
  static void Fields(F& f) {
    f("op", &CollectiveKindView::op);
    f("count", &CollectiveKindView::count);
    f("async", &CollectiveKindView::async);
    f("sync", &CollectiveKindView::sync);
    f("bytes", &CollectiveKindView::bytes);
    f("max_bytes", &CollectiveKindView::max_bytes);
  }
};

struct HloDumpView {
  std::string file;
  int64_t bytes = 0, instructions = 0, collectives = 0, async_collectives = 0;
  std::vector<CollectiveKindView> by_kind;
  template <class F>
  static void Fields(F& f) {
    f("file", &HloDumpView::file);
    f("bytes", &HloDumpView::bytes);
    f("instructions", &HloDumpView::instructions);
    f("collectives", &HloDumpView::collectives);
    f("async_collectives", &HloDumpView::async_collectives);
    f("by_kind", &HloDumpView::by_kind);
  }
};

struct EventFileView {
  std::string file;
  int64_t bytes = 0, records = 0;
  bool truncated = false;
  template <class F>
  static void Fields(F& f) {
    f("file", &EventFileView::file);
    f("bytes", &EventFileView::bytes);
    f("records", &EventFileView::records);
    f("truncated", &EventFileView::truncated);
  }
};

struct ArtifactsView {
  std::vector<ProfileRunView> xplane_profiles;
  std::vector<HloDumpView> hlo_dumps;
  std::vector<EventFileView> tensorboard_event_files;
  std::optional<int64_t> hlo_dumps_total;         // when more than the 4 listed
  std::optional<std::vector<std::string>> notes;
  template <class F>
  static void Fields(F& f) {
    f("xplane_profiles", &ArtifactsView::xplane_profiles);
    f("hlo_dumps", &ArtifactsView::hlo_dumps);
    f("tensorboard_event_files", &ArtifactsView::tensorboard_event_files);
    f("hlo_dumps_total", &ArtifactsView::hlo_dumps_total);
    f("notes", &ArtifactsView::notes);
  }
};

// The profiler trace's view (tools/trace), over the steady steps of the job's newest
// profile: node 0's xplane (each GPU a rank) or the job's Chrome traces (one per rank).
struct TraceKernelView {
  std::string name;                      // cut to 80 bytes
  int64_t count = 0;
  double ms_per_step = 0, pct_of_step = 0;
  template <class F>
  static void Fields(F& f) {
    f("name", &TraceKernelView::name);
    f("count", &TraceKernelView::count, {.description = "calls over the whole trace"});
    f("ms_per_step", &TraceKernelView::ms_per_step);
    f("pct_of_step", &TraceKernelView::pct_of_step);
  }
};

struct TraceCollectiveView {
  std::string kind;
  double count_per_step = 0, ms_per_step = 0;
  Nullable<double> busbw_gbps;
  template <class F>
  static void Fields(F& f) {
    f("kind", &TraceCollectiveView::kind);
    f("count_per_step", &TraceCollectiveView::count_per_step);
    f("ms_per_step", &TraceCollectiveView::ms_per_step, {.description = "kernel time, waiting for peers included"});
    f("busbw_gbps", &TraceCollectiveView::busbw_gbps, {.description = "achieved bus bandwidth when the trace gives sizes"});
  }
};

struct TraceRankView {
  int64_t rank = 0;
  Nullable<double> step_ms, compute_pct, exposed_comm_pct, memcpy_pct, idle_pct;
  template <class F>
  static void Fields(F& f) {
    f("rank", &TraceRankView::rank, {.description = "the rank, or the GPU ordinal of an xplane"});
    f("step_ms", &TraceRankView::step_ms);
    f("compute_pct", &TraceRankView::compute_pct);
    f("exposed_comm_pct", &TraceRankView::exposed_comm_pct);
    f("memcpy_pct", &TraceRankView::memcpy_pct);
    f("idle_pct", &TraceRankView::idle_pct);
  }
};

struct TraceSection {
  std::vector<std::string> files;        // job-dir-relative
  std::string format;                    // xplane | kineto | legacy
  int64_t steps = 0, steady_steps = 0;
  Nullable<double> step_ms, compute_pct, comm_pct, exposed_comm_pct, memcpy_pct, idle_pct;   // means over ranks
  std::vector<TraceKernelView> top_kernels;
  std::vector<TraceCollectiveView> collectives;
  std::vector<TraceRankView> ranks;
  std::string straggler_verdict;         // straggler | balanced | unknown
  Nullable<int64_t> straggler;
  std::string straggler_why;
  std::vector<std::string> next;         // what to look at next, most telling first
  template <class F>
  static void Fields(F& f) {
    f("files", &TraceSection::files);
    f("format", &TraceSection::format, {.one_of = {"xplane", "kineto", "legacy"}});
    f("steps", &TraceSection::steps);
    f("steady_steps", &TraceSection::steady_steps);
    f("step_ms", &TraceSection::step_ms, {.description = "steady GPU step window (first kernel start to last end)"});
    f("compute_pct", &TraceSection::compute_pct);
    f("comm_pct", &TraceSection::comm_pct);
    f("exposed_comm_pct", &TraceSection::exposed_comm_pct, {.description = "communication not overlapped by compute"});
    f("memcpy_pct", &TraceSection::memcpy_pct, {.description = "memory copies not overlapped by kernels"});
    f("idle_pct", &TraceSection::idle_pct);
    f("top_kernels", &TraceSection::top_kernels, {.description = "rank 0's five largest kernels (CPU ops for CPU-only traces)"});
    f("collectives", &TraceSection::collectives);
    f("ranks", &TraceSection::ranks);
    f("straggler_verdict", &TraceSection::straggler_verdict, {.one_of = {"straggler", "balanced", "unknown"}});
    f("straggler", &TraceSection::straggler);
    f("straggler_why", &TraceSection::straggler_why);
    f("next", &TraceSection::next);
  }
};

struct GoodputAttemptView {
  std::string job;
  int64_t attempt = 0;
  Nullable<int64_t> first_step, last_step, resumed_from, kept_through;
  int64_t redone_steps = 0;
  std::string cls, status;
  Nullable<std::string> approved_via;
  Nullable<double> approval_wait_seconds;
  template <class F>
  static void Fields(F& f) {
    f("job", &GoodputAttemptView::job);
    f("attempt", &GoodputAttemptView::attempt, {.description = "0: the original job; k: its k-th restart"});
    f("first_step", &GoodputAttemptView::first_step);
    f("last_step", &GoodputAttemptView::last_step);
    f("resumed_from", &GoodputAttemptView::resumed_from, {.description = "the checkpoint step its restart plan resumed from"});
    f("kept_through", &GoodputAttemptView::kept_through,
      {.description = "its steps up to here were kept; later ones were redone by the next attempt (null: all kept)"});
    f("redone_steps", &GoodputAttemptView::redone_steps);
    f("class", &GoodputAttemptView::cls);
    f("status", &GoodputAttemptView::status);
    f("approved_via", &GoodputAttemptView::approved_via, {.description = "how its restart plan was approved"});
    f("approval_wait_seconds", &GoodputAttemptView::approval_wait_seconds);
  }
};

struct GoodputView {
  double total_seconds = 0, productive_seconds = 0, goodput_pct = 0;
  double startup_seconds = 0, checkpoint_seconds = 0, redone_seconds = 0, failure_seconds = 0;
  double approval_seconds = 0, restart_seconds = 0, other_seconds = 0;
  int64_t interruptions = 0, redone_steps = 0;
  std::vector<GoodputAttemptView> attempts;
  std::vector<std::string> notes;
  template <class F>
  static void Fields(F& f) {
    f("total_seconds", &GoodputView::total_seconds, {.description = "first attempt's start to the last one's end"});
    f("productive_seconds", &GoodputView::productive_seconds, {.description = "kept steps at the median step time"});
    f("goodput_pct", &GoodputView::goodput_pct);
    f("startup_seconds", &GoodputView::startup_seconds,
      {.description = "before each attempt's first step, plus that step's excess (init, compile, restore)"});
    f("checkpoint_seconds", &GoodputView::checkpoint_seconds, {.description = "excess of steps next to a checkpoint save"});
    f("redone_seconds", &GoodputView::redone_seconds, {.description = "steps lost to a failure and done again"});
    f("failure_seconds", &GoodputView::failure_seconds, {.description = "from a failed attempt's last step to its end"});
    f("approval_seconds", &GoodputView::approval_seconds, {.description = "restart plans waiting for a human"});
    f("restart_seconds", &GoodputView::restart_seconds, {.description = "the rest of the gaps between attempts"});
    f("other_seconds", &GoodputView::other_seconds);
    f("interruptions", &GoodputView::interruptions);
    f("redone_steps", &GoodputView::redone_steps);
    f("attempts", &GoodputView::attempts, {.description = "the chain, oldest first"});
    f("notes", &GoodputView::notes);
  }
};

struct ReportLink {
  std::string path, url;
  template <class F>
  static void Fields(F& f) {
    f("path", &ReportLink::path);
    f("url", &ReportLink::url);
  }
};

struct PerfAnswer {
  PerfJobView job;
  std::string status, cls;
  PerfSteps steps;
  PerfSteady steady;
  MfuSource mfu;
  std::vector<PerfWindowView> windows;
  JitterView jitter;
  Nullable<LossTrend> loss;
  std::string tgs_pattern;
  std::vector<TgsPhase> phases;
  OverheadView periodic_overhead;
  ArtifactsView artifacts;
  Nullable<TraceSection> trace;
  Nullable<GoodputView> goodput;
  Nullable<ReportLink> report;
  std::vector<std::string> notes;
  std::string verdict;
  bool truncated = false;                 // set by the answer budget
  std::optional<std::string> omitted;     // what the budget left out
  template <class F>
  static void Fields(F& f) {
    f("job", &PerfAnswer::job);
    f("status", &PerfAnswer::status, {.description = "triage_log's status of the job"});
    f("class", &PerfAnswer::cls, {.description = "triage_log's class of the job"});
    f("steps", &PerfAnswer::steps);
    f("steady", &PerfAnswer::steady);
    f("mfu", &PerfAnswer::mfu);
    f("windows", &PerfAnswer::windows);
    f("jitter", &PerfAnswer::jitter);
    f("loss", &PerfAnswer::loss);
    f("tgs_pattern", &PerfAnswer::tgs_pattern);
    f("phases", &PerfAnswer::phases);
    f("periodic_overhead", &PerfAnswer::periodic_overhead);
    f("artifacts", &PerfAnswer::artifacts);
    f("trace", &PerfAnswer::trace, {.description = "the step decomposition from the job's profiler trace, when it has one"});
    f("goodput", &PerfAnswer::goodput,
      {.description = "when the job is one attempt of a restarted run: productive vs lost time over the chain"});
    f("report", &PerfAnswer::report);
    f("notes", &PerfAnswer::notes);
    f("verdict", &PerfAnswer::verdict);
    f("truncated", &PerfAnswer::truncated);
    f("omitted", &PerfAnswer::omitted);
  }
};

}  // namespace mt::tools
