#include "tools/perf/perf_analysis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "base/workspace_files.h"
#include "tools/common/iso_time.h"
#include "tools/perf/perf_artifacts.h"
#include "tools/perf/perf_trace.h"
#include "tools/perf/perf_peaks.h"
#include "tools/perf/report_perf_html.h"
#include "tools/logs/scan_cache.h"
#include "tools/common/tgs_phases.h"
#include "tools/logs/triage.h"
#include "tools/tsdb/tsdb_blocks.h"
#include "tools/tsdb/tsdb_context.h"
#include "tools/tsdb/tsdb_series.h"

namespace mt::tools {
namespace {

constexpr int kTailMinFollowing = 20;

// The GPU and data type as the log's "[MFU] MFU tracking enabled (gpu=…, dtype=…, peak=…)"
// line names them (first 16 MiB only: it is printed at start-up).
struct LogGpu {
  std::string gpu, dtype;
  std::optional<double> peak;
};
LogGpu ReadLogGpu(const std::filesystem::path& log) {
  LogGpu g;
  // Bounded like the scanner: a regular file only, the first 16 MiB, lines cut at 64 KiB
  // (one 2 GB line used to cost 4 GB through std::getline).
  auto f = base::OpenRegularFile(nullptr, log);
  if (!f.ok()) return g;
  base::LineLimits limits;
  limits.max_total_bytes = 16u << 20;
  base::LineReader lines(f->fd(), limits);
  std::string_view view;
  std::string line;
  auto field = [&](const std::string& key) -> std::string {
    size_t p = line.find(key + "=");
    if (p == std::string::npos) return "";
    p += key.size() + 1;
    size_t e = line.find_first_of(",) ", p);
    return line.substr(p, e == std::string::npos ? std::string::npos : e - p);
  };
  while (lines.Next(&view)) {
    if (view.find("MFU tracking enabled") == std::string_view::npos) continue;
    line.assign(view);
    g.gpu = field("gpu");
    g.dtype = field("dtype");
    std::string pk = field("peak");
    try {
      if (!pk.empty()) g.peak = std::stod(pk);
    } catch (const std::exception&) {
    }
    break;
  }
  return g;
}

std::string DtypeFromConfig(const LogScan& scan) {
  auto get = [&](const char* k) -> std::string {
    auto it = scan.config.find(k);
    return it == scan.config.end() ? "" : it->second;
  };
  std::string q = get("quantization");
  for (auto& c : q) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (q.find("fp8") != std::string::npos) return "fp8";
  std::string d = get("dtype");
  if (d == "bfloat16" || d.empty()) return "bf16";
  return d;
}

std::vector<const StepRecord*> Ordered(const LogScan& scan) {
  std::vector<const StepRecord*> v;
  v.reserve(scan.steps.size());
  for (const auto& s : scan.steps) v.push_back(&s);
  return v;   // the scanner sorts steps by step number
}

}  // namespace

std::string DefaultJudgeTime(const JobFiles& job) {
  if (!job.has_tsdb || job.dir.empty()) return "";
  try {
    TsdbLayout l = ReadTsdbLayout(job.dir / "prometheus");
    if (l.blocks.empty()) return "";
    return FormatIso8601((l.max_ms - 1) / 1000);
  } catch (const std::exception&) {
    return "";
  }
}

std::vector<StepWindow> SplitWindows(const LogScan& scan, int warmup_steps) {
  if (warmup_steps < 0) throw std::invalid_argument("warmup_steps must be ≥ 0");
  auto steps = Ordered(scan);
  size_t w = std::min(steps.size(), static_cast<size_t>(warmup_steps));
  size_t following = steps.size() - w;
  size_t tail = following >= static_cast<size_t>(kTailMinFollowing) ? std::max<size_t>(1, following / 10) : 0;
  struct Range {
    const char* name;
    size_t a, b;
  };
  std::vector<Range> ranges = {{"warmup", 0, w}, {"steady", w, steps.size() - tail}, {"tail", steps.size() - tail, steps.size()}};
  std::vector<StepWindow> out;
  for (const auto& r : ranges) {
    StepWindow sw;
    sw.name = r.name;
    std::vector<double> tgs, sec, tf, mfu;
    for (size_t i = r.a; i < r.b; ++i) {
      const StepRecord& s = *steps[i];
      if (sw.first_step < 0) sw.first_step = s.step;
      sw.last_step = s.step;
      if (s.tgs_n) tgs.push_back(s.tgs());
      if (s.seconds > 0) sec.push_back(s.seconds);
      if (s.tflops >= 0) tf.push_back(s.tflops);
      if (s.mfu >= 0) mfu.push_back(s.mfu);
    }
    sw.tgs = Summarize(tgs);
    sw.step_seconds = Summarize(sec);
    sw.tflops = Summarize(tf);
    sw.mfu = Summarize(mfu);
    out.push_back(std::move(sw));
  }
  return out;
}

SteadyTgs SteadyTgsOfScan(const LogScan& scan, int warmup_steps) {
  SteadyTgs t;
  t.warmup_steps = warmup_steps;
  if (!scan.steps.empty()) t.entries_per_step = static_cast<double>(scan.step_lines) / static_cast<double>(scan.steps.size());
  auto windows = SplitWindows(scan, warmup_steps);
  const StepWindow& s = windows[1];
  if (s.tgs.n == 0) return t;
  t.ok = true;
  t.mean = s.tgs.mean;
  t.std = s.tgs.std;
  t.p50 = s.tgs.p50;
  t.steps = s.tgs.n;
  t.first_step = s.first_step;
  t.last_step = s.last_step;
  t.step_seconds_mean = s.step_seconds.mean;
  return t;
}

SteadyTgs SteadyTgsOfLog(const std::filesystem::path& log, int warmup_steps) {
  ScanHandle h = ScanCache::Shared().Get(log);
  return SteadyTgsOfScan(h.data->scan, warmup_steps);
}

PeriodicOverhead FindPeriodicOverhead(const LogScan& scan, int warmup_steps) {
  PeriodicOverhead o;
  auto steps = Ordered(scan);
  size_t w = std::min(steps.size(), static_cast<size_t>(std::max(0, warmup_steps)));
  std::vector<double> sec;
  for (size_t i = w; i < steps.size(); ++i)
    if (steps[i]->seconds > 0) sec.push_back(steps[i]->seconds);
  if (sec.size() < 10) return o;
  double med = Quantile(sec, 0.5);
  double rs = std::max(RobustStd(sec), 0.01 * med);
  double threshold = med + std::max(6 * rs, 0.1 * med);
  double total = 0, extra = 0;
  for (double s : sec) total += s;
  for (size_t i = w; i < steps.size(); ++i)
    if (steps[i]->seconds > threshold) {
      o.spike_steps.push_back(steps[i]->step);
      extra += steps[i]->seconds - med;
    }
  o.median_seconds = med;
  if (o.spike_steps.empty()) return o;
  o.extra_seconds_per_spike = extra / static_cast<double>(o.spike_steps.size());
  o.overhead_pct = total > 0 ? 100 * extra / total : 0;
  for (int64_t s : o.spike_steps)
    for (int64_t c : scan.checkpoint_steps)
      if (std::llabs(s - c) <= 1) {
        ++o.at_checkpoints;
        break;
      }
  if (o.spike_steps.size() >= 2) {
    std::map<int64_t, size_t> gaps;
    for (size_t i = 1; i < o.spike_steps.size(); ++i) ++gaps[o.spike_steps[i] - o.spike_steps[i - 1]];
    auto best = std::max_element(gaps.begin(), gaps.end(), [](auto& a, auto& b) { return a.second < b.second; });
    if (best->second * 10 >= (o.spike_steps.size() - 1) * 6) o.period_steps = best->first;
  }
  o.detected = o.period_steps.has_value() || o.at_checkpoints > 0;
  return o;
}

namespace {

// A rounded number for a field that is always a number (a non-finite statistic reads 0).
double R(double v, int digits) { return std::isfinite(v) ? RoundDecimals(v, digits) : 0; }

Nullable<int64_t> StepOrNull(int64_t step) { return step < 0 ? Nullable<int64_t>() : Nullable<int64_t>(step); }

Nullable<StatView> StatOrNull(const StatSummary& s) {
  if (s.n == 0) return {};
  return StatView{static_cast<int64_t>(s.n), R(s.mean, 5), R(s.std, 3), R(s.p50, 5), R(s.p99, 5), R(s.min, 5), R(s.max, 5)};
}

// MFU: the log's own when it prints one (and no other GPU was asked for), else computed from
// the peak table; a note says why there is none.
MfuSource ReadMfu(const std::filesystem::path& log, const LogScan& scan, const StepWindow& steady, const PerfOptions& opt,
                  std::optional<double>* mfu_pct, std::vector<std::string>* notes) {
  LogGpu lg = ReadLogGpu(log);
  MfuSource m;
  const std::string gpu = !opt.gpu.empty() ? opt.gpu : lg.gpu;
  if (!gpu.empty()) m.gpu = gpu;
  m.dtype = !opt.dtype.empty() ? opt.dtype : (!lg.dtype.empty() ? lg.dtype : DtypeFromConfig(scan));
  std::optional<GpuPeaks> peaks;
  if (!gpu.empty()) {
    peaks = LoadGpuPeaks(opt.peaks_file);
    if (auto p = peaks->Find(gpu, m.dtype)) {
      m.peak_tflops = *p;
      m.peak_source = peaks->source;
    } else if (lg.peak && gpu == lg.gpu) {
      m.peak_tflops = *lg.peak;
      m.peak_source = "the log's [MFU] line";
    }
  }
  if (steady.mfu.n > 0 && opt.gpu.empty()) {
    *mfu_pct = steady.mfu.mean;
    m.source = "log";
  } else if (steady.tflops.n > 0 && m.peak_tflops) {
    *mfu_pct = 100 * steady.tflops.mean / *m.peak_tflops;
    m.source = "computed";
  } else if (steady.tflops.n > 0) {
    notes->push_back(gpu.empty() ? "MFU not in the log and the GPU is unknown: pass `gpu` (e.g. MI355X) to compute it from the peak table"
                                 : "MFU not in the log and no peak for " + gpu + " " + m.dtype + " in " +
                                       (peaks ? peaks->source : std::string("the peak table")));
  }
  return m;
}

// The loss trend over the steps after warm-up (null when no step logged a loss).
Nullable<LossTrend> ReadLossTrend(const LogScan& scan, int warmup_steps) {
  std::vector<double> lx, ly;
  int64_t nan_steps = 0;
  for (size_t i = std::min(scan.steps.size(), static_cast<size_t>(warmup_steps)); i < scan.steps.size(); ++i) {
    float l = scan.steps[i].loss;
    if (std::isnan(l)) ++nan_steps;
    else if (l >= 0) lx.push_back(static_cast<double>(scan.steps[i].step)), ly.push_back(l);
  }
  LossTrend t;
  t.nan_steps = nan_steps;
  if (ly.empty()) {
    if (!nan_steps) return {};
    t.trend = "nan";
    return t;
  }
  const double slope = Slope(lx, ly) * 100, first = ly.front();
  t.trend = std::fabs(slope) < 0.001 * std::max(1e-9, std::fabs(first)) ? "flat" : (slope < 0 ? "decreasing" : "increasing");
  t.first = R(first, 5);
  t.last = R(ly.back(), 5);
  t.min = R(*std::min_element(ly.begin(), ly.end()), 5);
  t.slope_per_100_steps = R(slope, 4);
  return t;
}

OverheadView OverheadOf(const PeriodicOverhead& o) {
  OverheadView v;
  v.detected = o.detected;
  v.spikes = static_cast<int64_t>(o.spike_steps.size());
  if (o.period_steps) v.period_steps = *o.period_steps;
  v.median_step_seconds = R(o.median_seconds, 5);
  v.extra_seconds_per_spike = R(o.extra_seconds_per_spike, 4);
  v.overhead_pct = R(o.overhead_pct, 3);
  v.at_checkpoints = static_cast<int64_t>(o.at_checkpoints);
  v.spike_steps.assign(o.spike_steps.begin(), o.spike_steps.begin() + static_cast<long>(std::min<size_t>(o.spike_steps.size(), 12)));
  return v;
}

JitterView JitterOf(const StepWindow& steady) {
  JitterView j;
  j.tgs_cv_pct = R(steady.tgs.mean ? 100 * steady.tgs.std / steady.tgs.mean : 0, 3);
  j.step_seconds_cv_pct = R(steady.step_seconds.mean ? 100 * steady.step_seconds.std / steady.step_seconds.mean : 0, 3);
  if (steady.step_seconds.p50 > 0) j.step_seconds_p99_over_p50 = R(steady.step_seconds.p99 / steady.step_seconds.p50, 4);
  return j;
}

PerfJobView JobViewOf(const JobFiles& job, const Json& triage) {
  PerfJobView v{job.id, job.name, job.log_display, {}, {}, {}};
  if (!job.dir.empty()) v.dir = job.dir_display;
  const Json& tj = triage["job"];
  if (tj.contains("model") && tj["model"].is_string()) v.model = tj["model"].get<std::string>();
  if (tj.contains("nodes") && tj["nodes"].is_number_integer()) v.nodes = tj["nodes"].get<int64_t>();
  return v;
}

std::string Verdict(const PerfReport& rep, const PerfAnswer& a, const StepWindow& steady, size_t logical_steps, bool failed) {
  std::string v;
  if (rep.steady.ok) {
    v = "steady TGS " + Num(rep.steady.mean) + " tokens/s/device over steps " + std::to_string(steady.first_step) + "–" +
        std::to_string(steady.last_step);
    if (rep.mfu_pct) v += ", MFU " + Num(*rep.mfu_pct) + " %" + (a.mfu.source == "computed" ? " (computed)" : "");
    if (steady.step_seconds.n) v += ", " + Num(steady.step_seconds.mean) + " s/step";
    v += ", jitter " + Num(steady.tgs.mean ? 100 * steady.tgs.std / steady.tgs.mean : 0) + " %";
    const auto& o = rep.overhead;
    if (o.detected && o.period_steps)
      v += "; periodic overhead every " + std::to_string(*o.period_steps) + " steps costs " + Num(o.overhead_pct) + " %";
    if (a.phases.size() > 1) v += "; " + std::to_string(a.phases.size()) + " throughput phases (" + a.tgs_pattern + ")";
  } else {
    v = "no steady-state throughput: " + std::to_string(logical_steps) + " logical steps logged";
  }
  if (failed) v += "; job " + a.status;
  return v;
}

}  // namespace

PerfReport AnalyzePerf(const JobFiles& job, const PerfOptions& opt) {
  if (opt.warmup_steps < 0 || opt.warmup_steps > 100000) throw std::invalid_argument("warmup_steps must be between 0 and 100000");
  std::filesystem::path log = !job.log.empty() ? job.log : (!job.rank_logs.empty() ? job.rank_logs.front() : std::filesystem::path());
  if (log.empty()) throw std::runtime_error("job " + job.id + " has no log yet, so there is nothing to measure");

  PerfReport rep;
  PerfAnswer& a = rep.answer;
  // Triage first: a failed job's throughput is still measured, but labelled as such.
  Json targs = Json::object();
  std::string now = !opt.now.empty() ? opt.now : DefaultJudgeTime(job);
  if (!now.empty()) targs["now"] = now;
  const Json triage = TriageLogStructured(job, targs);
  ScanHandle handle = ScanCache::Shared().Get(log);
  const LogScan& scan = handle.data->scan;

  rep.windows = SplitWindows(scan, opt.warmup_steps);
  rep.steady = SteadyTgsOfScan(scan, opt.warmup_steps);
  rep.overhead = FindPeriodicOverhead(scan, opt.warmup_steps);
  const StepWindow& steady = rep.windows[1];

  a.job = JobViewOf(job, triage);
  a.status = triage.value("status", "");
  a.cls = triage.value("class", "");
  a.mfu = ReadMfu(log, scan, steady, opt, &rep.mfu_pct, &a.notes);
  if (!scan.steps.empty()) a.steps.first = scan.steps.front().step, a.steps.last = scan.steps.back().step;
  a.steps.logical = static_cast<int64_t>(scan.steps.size());
  a.steps.entries_per_step = R(rep.steady.entries_per_step, 4);
  a.steps.warmup_steps = opt.warmup_steps;
  if (rep.steady.ok) a.steady.tgs = R(rep.steady.mean, 6);
  a.steady.tgs_std = R(rep.steady.std, 4);
  if (steady.step_seconds.n) a.steady.step_seconds = R(steady.step_seconds.mean, 5);
  if (steady.tflops.n) a.steady.tflops_per_device = R(steady.tflops.mean, 5);
  if (rep.mfu_pct) a.steady.mfu_pct = R(*rep.mfu_pct, 4);
  a.steady.first_step = StepOrNull(steady.first_step);
  a.steady.last_step = StepOrNull(steady.last_step);
  for (const auto& w : rep.windows)
    a.windows.push_back({w.name, StepOrNull(w.first_step), StepOrNull(w.last_step), StatOrNull(w.tgs), StatOrNull(w.step_seconds)});
  a.jitter = JitterOf(steady);
  a.loss = ReadLossTrend(scan, opt.warmup_steps);

  // Phases, as triage finds them.
  std::vector<TgsPoint> pts;
  for (const auto& s : scan.steps)
    if (s.tgs_n) pts.push_back({s.step, s.tgs()});
  TgsAnalysis ph = AnalyzeTgs(pts);
  a.tgs_pattern = ph.pattern;
  for (size_t i = 0; i < ph.phases.size() && i < 8; ++i) {
    TgsPhase p = ph.phases[i];
    p.mean = R(p.mean, 5), p.std = R(p.std, 3), p.change_pct = R(p.change_pct, 3);
    a.phases.push_back(p);
  }
  a.periodic_overhead = OverheadOf(rep.overhead);
  if (rep.windows[2].step_seconds.n > 1 && steady.step_seconds.std > 0 && rep.windows[2].step_seconds.std > 3 * steady.step_seconds.std)
    a.notes.push_back("tail std is more than 3x the steady std: periodic overhead or a late slowdown");
  const bool failed = a.status == "failed" || a.status == "hang" || a.status == "unknown";
  if (failed)
    a.notes.push_back("the job " + (a.status == "hang" ? std::string("hangs") : "failed (" + a.cls + ")") +
                      ": its throughput is measured over the steps it completed");
  if (!rep.steady.ok) a.notes.push_back("no step with Tokens/s/device after the " + std::to_string(opt.warmup_steps) + " warm-up steps");
  const PerfArtifacts artifacts = FindPerfArtifacts(job.dir);
  a.artifacts = DescribeArtifacts(artifacts);
  if (!job.dir.empty()) a.trace = ReadPerfTrace(job.dir, artifacts, &a.notes).section;
  a.verdict = Verdict(rep, a, steady, scan.steps.size(), failed);

  // The page shows the verdict, so it is written last.
  if (opt.write_report && !job.dir.empty()) {
    try {
      rep.report_file = WritePerfReportHtml(job, mcp::Encode(a), scan);
      a.report = ReportLink{job.dir_display + "/mt_report/perf.html", opt.report_url_prefix + "/" + job.dir.filename().string() + "/perf.html"};
    } catch (const std::exception& e) {
      a.notes.push_back(std::string("HTML report not written: ") + e.what());
    }
  } else if (opt.write_report) {
    a.notes.push_back("no job directory: HTML report not written");
  }
  rep.structured = mcp::Encode(a);
  return rep;
}

std::string PerfText(const Json& s) {
  auto str = [](const Json& v) -> std::string {
    if (v.is_null()) return "-";
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number()) return Num(v.get<double>());
    return v.dump();
  };
  std::string t = str(s["job"]["id"]) + ": " + str(s["verdict"]);
  t += "\n  status " + str(s["status"]) + ", steps " + str(s["steps"]["first"]) + ".." + str(s["steps"]["last"]) + " (" +
       str(s["steps"]["logical"]) + " logical, " + str(s["steps"]["entries_per_step"]) + " lines/step, warm-up " +
       str(s["steps"]["warmup_steps"]) + ")";
  const Json& st = s["steady"];
  t += "\n  steady: TGS " + str(st["tgs"]) + " ± " + str(st["tgs_std"]) + ", " + str(st["step_seconds"]) + " s/step, " +
       str(st["tflops_per_device"]) + " TFLOP/s/device, MFU " + str(st["mfu_pct"]) + " %";
  const Json& m = s["mfu"];
  if (m["source"] == "computed")
    t += " (computed with the " + str(m["gpu"]) + " " + str(m["dtype"]) + " peak " + str(m["peak_tflops"]) + " TFLOP/s from " + str(m["peak_source"]) + ")";
  for (const auto& w : s["windows"])
    if (w["tgs"].is_object())
      t += "\n  " + str(w["name"]) + " " + str(w["first_step"]) + "–" + str(w["last_step"]) + ": TGS mean " + str(w["tgs"]["mean"]) +
           " std " + str(w["tgs"]["std"]) + " p50 " + str(w["tgs"]["p50"]) + " p99 " + str(w["tgs"]["p99"]) + " min " +
           str(w["tgs"]["min"]) + " max " + str(w["tgs"]["max"]);
  for (const auto& p : s["phases"])
    t += "\n  phase " + str(p["start_step"]) + "–" + str(p["end_step"]) + ": " + str(p["mean"]) + " (" + str(p["change_pct"]) + " %)";
  const Json& o = s["periodic_overhead"];
  if (o["spikes"].get<size_t>() > 0)
    t += "\n  step-time spikes: " + str(o["spikes"]) + " (period " + str(o["period_steps"]) + " steps, +" +
         str(o["extra_seconds_per_spike"]) + " s each, " + str(o["overhead_pct"]) + " % of the time, " + str(o["at_checkpoints"]) +
         " at checkpoints)";
  if (s["loss"].is_object())
    t += "\n  loss: " + str(s["loss"]["first"]) + " → " + str(s["loss"]["last"]) + " (" + str(s["loss"]["trend"]) + ")";
  const Json& a = s["artifacts"];
  t += "\n  artifacts: " + std::to_string(a["xplane_profiles"].size()) + " xplane profile runs, " +
       std::to_string(a["hlo_dumps"].size()) + " HLO dumps, " + std::to_string(a["tensorboard_event_files"].size()) + " event files";
  for (const auto& h : a["hlo_dumps"]) {
    t += "\n    " + str(h["file"]) + ": " + str(h["collectives"]) + " collectives (" + str(h["async_collectives"]) + " async)";
    for (const auto& k : h["by_kind"]) t += "; " + str(k["op"]) + " " + str(k["count"]);
  }
  if (s.contains("goodput") && s["goodput"].is_object()) {
    const Json& g = s["goodput"];
    t += "\n  goodput of the run: " + str(g["goodput_pct"]) + " % productive of " + str(g["total_seconds"]) + " s over " +
         std::to_string(g["attempts"].size()) + " attempts, " + str(g["interruptions"]) + " interruptions; lost: startup " +
         str(g["startup_seconds"]) + " s, checkpoints " + str(g["checkpoint_seconds"]) + " s, redone " + str(g["redone_steps"]) +
         " steps " + str(g["redone_seconds"]) + " s, failures " + str(g["failure_seconds"]) + " s, approval " +
         str(g["approval_seconds"]) + " s, restarts " + str(g["restart_seconds"]) + " s, other " + str(g["other_seconds"]) + " s";
    for (const auto& a : g["attempts"])
      t += "\n    attempt " + str(a["attempt"]) + ": job " + str(a["job"]) + " steps " + str(a["first_step"]) + ".." +
           str(a["last_step"]) + (a["resumed_from"].is_null() ? "" : " (resumed from " + str(a["resumed_from"]) + ")") + ", " +
           str(a["class"]) + "/" + str(a["status"]) +
           (a["approved_via"].is_null() ? "" : ", restart approved via " + str(a["approved_via"]) + " after " +
                                                   str(a["approval_wait_seconds"]) + " s");
  }
  if (s["trace"].is_object()) {
    const Json& tr = s["trace"];
    t += "\n  trace (" + str(tr["format"]) + ", " + str(tr["steady_steps"]) + " steady steps, " + std::to_string(tr["ranks"].size()) +
         " ranks): step " + str(tr["step_ms"]) + " ms = compute " + str(tr["compute_pct"]) + " %, exposed comm " +
         str(tr["exposed_comm_pct"]) + " % (comm " + str(tr["comm_pct"]) + " %), memcpy " + str(tr["memcpy_pct"]) + " %, idle " +
         str(tr["idle_pct"]) + " %";
    for (const auto& k : tr["top_kernels"])
      t += "\n    " + str(k["pct_of_step"]) + " %  " + str(k["ms_per_step"]) + " ms/step  " + str(k["name"]);
    for (const auto& c : tr["collectives"])
      t += "\n    " + str(c["kind"]) + ": " + str(c["count_per_step"]) + "/step, " + str(c["ms_per_step"]) + " ms/step";
    t += "\n    ranks: " + str(tr["straggler_verdict"]) + ": " + str(tr["straggler_why"]);
    for (const auto& n : tr["next"]) t += "\n    next: " + str(n);
  }
  if (s["report"].is_object()) t += "\n  report: " + str(s["report"]["path"]) + " (served at " + str(s["report"]["url"]) + ")";
  for (const auto& n : s["notes"]) t += "\n  note: " + str(n);
  return t;
}

}  // namespace mt::tools
