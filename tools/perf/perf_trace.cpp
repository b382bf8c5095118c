#include "tools/perf/perf_trace.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <system_error>

#include "tools/common/stats.h"
#include "tools/trace/event_classes.h"
#include "tools/trace/rank_comparison.h"
#include "tools/trace/trace_files.h"

namespace mt::tools {
namespace {

namespace fs = std::filesystem;
namespace tr = trace;

constexpr uint64_t kMaxTraceBytes = uint64_t{4} << 30;
constexpr size_t kMaxChromeTraces = 16;

double R1(double v) { return RoundDecimals(v, 1); }
double R3(double v) { return RoundDecimals(v, 3); }

std::vector<std::string> ChooseFiles(const PerfArtifacts& a) {
  if (!a.profiles.empty()) {
    const ProfileRun* newest = &*std::max_element(a.profiles.begin(), a.profiles.end(),
                                                  [](const ProfileRun& x, const ProfileRun& y) { return x.dir < y.dir; });
    if (!newest->files.empty()) return {(fs::path(newest->dir) / newest->files.front()).string()};
  }
  std::vector<std::string> out(a.chrome_traces.begin(), a.chrome_traces.begin() + static_cast<long>(std::min(a.chrome_traces.size(), kMaxChromeTraces)));
  return out;
}

double Mean(const std::vector<double>& v) { return Summarize(v).mean; }

std::string Pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", v);
  return b;
}

// What to look at next, from the decomposition: the largest loss first.
std::vector<std::string> Next(const TraceSection& t) {
  std::vector<std::pair<double, std::string>> items;
  if (t.straggler_verdict == "straggler" && t.straggler)
    items.emplace_back(100, "rank " + std::to_string(*t.straggler) + " holds the others up: diff its trace against a peer's (mt trace FILE --base FILE) and check its GPU in the TSDB (query_tsdb)");
  if (t.exposed_comm_pct && *t.exposed_comm_pct >= 10)
    items.emplace_back(*t.exposed_comm_pct, "exposed communication is " + Pct(*t.exposed_comm_pct) + " of the step: overlap the collectives with compute (scheduler / prefetch settings) or check the fabric (query_tsdb rdma)");
  if (t.idle_pct && *t.idle_pct >= 10)
    items.emplace_back(*t.idle_pct, "the GPU is idle " + Pct(*t.idle_pct) + " of the step: host-side gaps (input pipeline, launches, synchronisation)");
  if (t.memcpy_pct && *t.memcpy_pct >= 5)
    items.emplace_back(*t.memcpy_pct, "un-overlapped memory copies take " + Pct(*t.memcpy_pct) + " of the step");
  for (const TraceKernelView& k : t.top_kernels) {
    std::string low = k.name;
    for (char& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (low.find("nccl") != std::string::npos || low.find("rccl") != std::string::npos || low.find("gloo") != std::string::npos) continue;
    items.emplace_back(5, "the largest compute kernel, " + tr::CutUtf8(k.name, 48) + ", takes " + Pct(k.pct_of_step) + " of the step: its efficiency is the compute lever");
    break;
  }
  std::stable_sort(items.begin(), items.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < items.size() && i < 3; ++i) out.push_back(items[i].second);
  return out;
}

TraceSection Summarise(const std::vector<tr::TraceAnalysis>& an, const std::vector<std::string>& files) {
  TraceSection t;
  t.files = files;
  t.format = an.front().format;
  const tr::TraceAnalysis& first = an.front();
  t.steps = static_cast<int64_t>(first.per_step.size());
  t.steady_steps = static_cast<int64_t>(first.steady.steps.size());
  std::vector<double> step, compute, comm, exposed, mm, idle;
  for (size_t i = 0; i < an.size(); ++i) {
    const tr::SteadyFigures& s = an[i].steady;
    TraceRankView r;
    r.rank = tr::RankOf(an[i], i);
    if (s.step_time_us && s.shares) {
      r.step_ms = R3(*s.step_time_us / 1000);
      r.compute_pct = R1(100 * s.shares->compute);
      r.exposed_comm_pct = R1(100 * s.shares->exposed_comm);
      r.memcpy_pct = R1(100 * s.shares->memcpy_memset_exposed);
      r.idle_pct = R1(100 * s.shares->idle);
      step.push_back(*s.step_time_us / 1000);
      compute.push_back(100 * s.shares->compute);
      comm.push_back(100 * s.shares->comm);
      exposed.push_back(100 * s.shares->exposed_comm);
      mm.push_back(100 * s.shares->memcpy_memset_exposed);
      idle.push_back(100 * s.shares->idle);
    }
    t.ranks.push_back(r);
  }
  if (!step.empty()) {
    t.step_ms = R3(Mean(step));
    t.compute_pct = R1(Mean(compute));
    t.comm_pct = R1(Mean(comm));
    t.exposed_comm_pct = R1(Mean(exposed));
    t.memcpy_pct = R1(Mean(mm));
    t.idle_pct = R1(Mean(idle));
  }
  double per_step = std::max<double>(1, static_cast<double>(first.per_step.size()));
  double step_us = first.steady.step_time_us.value_or(0);
  for (size_t i = 0; i < first.top.size() && i < 5; ++i) {
    const tr::OpTotal& k = first.top[i];
    double us = k.total_us / per_step;
    t.top_kernels.push_back({tr::CutUtf8(k.name, 80), k.count, R3(us / 1000), step_us > 0 ? R1(100 * us / step_us) : 0});
  }
  for (const tr::CollectiveFigures& c : first.collectives) {
    TraceCollectiveView v{c.kind, R3(static_cast<double>(c.count) / per_step), R3(c.total_us / per_step / 1000), {}};
    if (c.busbw_gbps) v.busbw_gbps = R3(*c.busbw_gbps);
    t.collectives.push_back(v);
  }
  tr::RankComparison rc = tr::CompareRanks(an);
  t.straggler_verdict = rc.verdict;
  if (rc.straggler) t.straggler = *rc.straggler;
  t.straggler_why = rc.why;
  t.next = Next(t);
  return t;
}

}  // namespace

PerfTrace ReadPerfTrace(const fs::path& job_dir, const PerfArtifacts& artifacts, std::vector<std::string>* notes) {
  PerfTrace out;
  std::vector<std::string> files = ChooseFiles(artifacts);
  if (files.empty()) return out;
  uint64_t bytes = 0;
  for (const std::string& f : files) {
    std::error_code ec;
    uintmax_t n = fs::file_size(job_dir / f, ec);
    if (!ec) bytes += n;   // an unreadable file is reported when it is read
  }
  if (bytes > kMaxTraceBytes) {
    notes->push_back("profiler trace " + files.front() + " is over 4 GiB: not read here; run `mt trace` on it");
    return out;
  }
  // A file that is not a trace (a `rank3.json` of something else) is noted and skipped.
  std::vector<std::string> read;
  for (const std::string& f : files) {
    auto a = tr::AnalyseTraceFile(job_dir / f);
    if (!a.ok()) {
      notes->push_back("profiler trace not analysed: " + a.message());
      continue;
    }
    out.analyses.insert(out.analyses.end(), a->begin(), a->end());
    read.push_back(f);
  }
  files = read;
  if (out.analyses.empty()) return out;
  out.section = Summarise(out.analyses, files);
  return out;
}

}  // namespace mt::tools
