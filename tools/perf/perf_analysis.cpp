#include "tools/perf/perf_analysis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "base/workspace_files.h"
#include "tools/common/iso_time.h"
#include "tools/perf/perf_artifacts.h"
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

Json SummaryJson(const StatSummary& s) {
  if (s.n == 0) return nullptr;
  return {{"n", s.n}, {"mean", Round(s.mean, 5)}, {"std", Round(s.std, 3)}, {"p50", Round(s.p50, 5)},
          {"p99", Round(s.p99, 5)}, {"min", Round(s.min, 5)}, {"max", Round(s.max, 5)}};
}

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

PerfReport AnalyzePerf(const JobFiles& job, const PerfOptions& opt) {
  if (opt.warmup_steps < 0 || opt.warmup_steps > 100000) throw std::invalid_argument("warmup_steps must be between 0 and 100000");
  std::filesystem::path log = !job.log.empty() ? job.log : (!job.rank_logs.empty() ? job.rank_logs.front() : std::filesystem::path());
  if (log.empty()) throw std::runtime_error("job " + job.id + " has no log yet, so there is nothing to measure");

  PerfReport rep;
  std::vector<std::string> notes;
  // Triage first: a failed job's throughput is still measured, but labelled as such.
  Json targs = Json::object();
  std::string now = !opt.now.empty() ? opt.now : DefaultJudgeTime(job);
  if (!now.empty()) targs["now"] = now;
  Json triage = TriageLogStructured(job, targs);
  ScanHandle handle = ScanCache::Shared().Get(log);
  const LogScan& scan = handle.data->scan;

  rep.windows = SplitWindows(scan, opt.warmup_steps);
  rep.steady = SteadyTgsOfScan(scan, opt.warmup_steps);
  rep.overhead = FindPeriodicOverhead(scan, opt.warmup_steps);
  const StepWindow& steady = rep.windows[1];

  // MFU: logged, else computed from the peak table.
  LogGpu lg = ReadLogGpu(log);
  std::string gpu = !opt.gpu.empty() ? opt.gpu : lg.gpu;
  std::string dtype = !opt.dtype.empty() ? opt.dtype : (!lg.dtype.empty() ? lg.dtype : DtypeFromConfig(scan));
  Json mfu_info = {{"source", nullptr}, {"gpu", gpu.empty() ? Json(nullptr) : Json(gpu)}, {"dtype", dtype}, {"peak_tflops", nullptr}, {"peak_source", nullptr}};
  std::optional<GpuPeaks> peaks;
  if (!gpu.empty()) {
    peaks = LoadGpuPeaks(opt.peaks_file);
    if (auto p = peaks->Find(gpu, dtype)) {
      mfu_info["peak_tflops"] = *p;
      mfu_info["peak_source"] = peaks->source;
    } else if (lg.peak && gpu == lg.gpu) {
      mfu_info["peak_tflops"] = *lg.peak;
      mfu_info["peak_source"] = "the log's [MFU] line";
    }
  }
  if (steady.mfu.n > 0 && opt.gpu.empty()) {
    rep.mfu_pct = steady.mfu.mean;
    mfu_info["source"] = "log";
  } else if (steady.tflops.n > 0 && mfu_info["peak_tflops"].is_number()) {
    rep.mfu_pct = 100 * steady.tflops.mean / mfu_info["peak_tflops"].get<double>();
    mfu_info["source"] = "computed";
  } else if (steady.tflops.n > 0) {
    notes.push_back(gpu.empty() ? "MFU not in the log and the GPU is unknown: pass `gpu` (e.g. MI355X) to compute it from the peak table"
                                : "MFU not in the log and no peak for " + gpu + " " + dtype + " in " + (peaks ? peaks->source : std::string("the peak table")));
  }

  // Phases, as triage finds them.
  std::vector<TgsPoint> pts;
  for (const auto& s : scan.steps)
    if (s.tgs_n) pts.push_back({s.step, s.tgs()});
  TgsAnalysis ph = AnalyzeTgs(pts);
  Json phases = Json::array();
  for (size_t i = 0; i < ph.phases.size() && i < 8; ++i) {
    const auto& p = ph.phases[i];
    phases.push_back({{"start_step", p.start_step}, {"end_step", p.end_step}, {"steps", p.steps}, {"mean", Round(p.mean, 5)},
                      {"std", Round(p.std, 3)}, {"change_pct", Round(p.change_pct, 3)}});
  }

  // Loss trend over the steps after warm-up.
  std::vector<double> lx, ly;
  size_t nan_steps = 0;
  for (size_t i = std::min(scan.steps.size(), static_cast<size_t>(opt.warmup_steps)); i < scan.steps.size(); ++i) {
    float l = scan.steps[i].loss;
    if (std::isnan(l)) ++nan_steps;
    else if (l >= 0) lx.push_back(static_cast<double>(scan.steps[i].step)), ly.push_back(l);
  }
  Json loss = nullptr;
  if (!ly.empty()) {
    double slope = Slope(lx, ly) * 100;
    double first = ly.front(), last = ly.back();
    std::string trend = std::fabs(slope) < 0.001 * std::max(1e-9, std::fabs(first)) ? "flat" : (slope < 0 ? "decreasing" : "increasing");
    loss = {{"first", Round(first, 5)}, {"last", Round(last, 5)}, {"min", Round(*std::min_element(ly.begin(), ly.end()), 5)},
            {"slope_per_100_steps", Round(slope, 4)}, {"nan_steps", nan_steps}, {"trend", trend}};
  } else if (nan_steps) {
    loss = {{"nan_steps", nan_steps}, {"trend", "nan"}};
  }

  Json windows = Json::array();
  for (const auto& w : rep.windows)
    windows.push_back({{"name", w.name}, {"first_step", w.first_step < 0 ? Json(nullptr) : Json(w.first_step)},
                       {"last_step", w.last_step < 0 ? Json(nullptr) : Json(w.last_step)}, {"tgs", SummaryJson(w.tgs)},
                       {"step_seconds", SummaryJson(w.step_seconds)}});

  const auto& o = rep.overhead;
  Json overhead = {{"detected", o.detected}, {"spikes", o.spike_steps.size()},
                   {"period_steps", o.period_steps ? Json(*o.period_steps) : Json(nullptr)},
                   {"median_step_seconds", Round(o.median_seconds, 5)},
                   {"extra_seconds_per_spike", Round(o.extra_seconds_per_spike, 4)}, {"overhead_pct", Round(o.overhead_pct, 3)},
                   {"at_checkpoints", o.at_checkpoints}};
  Json spike_steps = Json::array();
  for (size_t i = 0; i < o.spike_steps.size() && i < 12; ++i) spike_steps.push_back(o.spike_steps[i]);
  overhead["spike_steps"] = spike_steps;

  double jitter_tgs = steady.tgs.mean ? 100 * steady.tgs.std / steady.tgs.mean : 0;
  double jitter_sec = steady.step_seconds.mean ? 100 * steady.step_seconds.std / steady.step_seconds.mean : 0;
  Json jitter = {{"tgs_cv_pct", Round(jitter_tgs, 3)}, {"step_seconds_cv_pct", Round(jitter_sec, 3)},
                 {"step_seconds_p99_over_p50", steady.step_seconds.p50 > 0 ? Json(Round(steady.step_seconds.p99 / steady.step_seconds.p50, 4)) : Json(nullptr)}};
  if (rep.windows[2].step_seconds.n > 1 && steady.step_seconds.std > 0 && rep.windows[2].step_seconds.std > 3 * steady.step_seconds.std)
    notes.push_back("tail std is more than 3x the steady std: periodic overhead or a late slowdown");

  std::string status = triage.value("status", "");
  std::string cls = triage.value("class", "");
  bool failed = status == "failed" || status == "hang" || status == "unknown";
  if (failed) notes.push_back("the job " + (status == "hang" ? std::string("hangs") : "failed (" + cls + ")") + ": its throughput is measured over the steps it completed");
  if (!rep.steady.ok) notes.push_back("no step with Tokens/s/device after the " + std::to_string(opt.warmup_steps) + " warm-up steps");

  PerfArtifacts art = FindPerfArtifacts(job.dir);

  Json s = {
      {"job", {{"id", job.id}, {"name", job.name}, {"log", job.log_display}, {"dir", job.dir.empty() ? Json(nullptr) : Json(job.dir_display)},
               {"model", triage["job"].value("model", Json(nullptr))}, {"nodes", triage["job"].value("nodes", Json(nullptr))}}},
      {"status", status},
      {"class", cls},
      {"steps", {{"first", scan.steps.empty() ? Json(nullptr) : Json(scan.steps.front().step)},
                 {"last", scan.steps.empty() ? Json(nullptr) : Json(scan.steps.back().step)},
                 {"logical", scan.steps.size()}, {"entries_per_step", Round(rep.steady.entries_per_step, 4)},
                 {"warmup_steps", opt.warmup_steps}}},
      {"steady", {{"tgs", rep.steady.ok ? Json(Round(rep.steady.mean, 6)) : Json(nullptr)},
                  {"tgs_std", Round(rep.steady.std, 4)},
                  {"step_seconds", steady.step_seconds.n ? Json(Round(steady.step_seconds.mean, 5)) : Json(nullptr)},
                  {"tflops_per_device", steady.tflops.n ? Json(Round(steady.tflops.mean, 5)) : Json(nullptr)},
                  {"mfu_pct", rep.mfu_pct ? Json(Round(*rep.mfu_pct, 4)) : Json(nullptr)},
                  {"first_step", steady.first_step < 0 ? Json(nullptr) : Json(steady.first_step)},
                  {"last_step", steady.last_step < 0 ? Json(nullptr) : Json(steady.last_step)}}},
      {"mfu", mfu_info},
      {"windows", windows},
      {"jitter", jitter},
      {"loss", loss},
      {"tgs_pattern", ph.pattern},
      {"phases", phases},
      {"periodic_overhead", overhead},
      {"artifacts", PerfArtifactsJson(art)},
      {"report", nullptr},
      {"notes", notes},
  };

  // Verdict.
  std::string v;
  if (rep.steady.ok) {
    v = "steady TGS " + Num(rep.steady.mean) + " tokens/s/device over steps " + std::to_string(steady.first_step) + "–" +
        std::to_string(steady.last_step);
    if (rep.mfu_pct) v += ", MFU " + Num(*rep.mfu_pct) + " %" + (mfu_info["source"] == "computed" ? " (computed)" : "");
    if (steady.step_seconds.n) v += ", " + Num(steady.step_seconds.mean) + " s/step";
    v += ", jitter " + Num(jitter_tgs) + " %";
    if (o.detected && o.period_steps)
      v += "; periodic overhead every " + std::to_string(*o.period_steps) + " steps costs " + Num(o.overhead_pct) + " %";
    if (ph.phases.size() > 1) v += "; " + std::to_string(ph.phases.size()) + " throughput phases (" + ph.pattern + ")";
  } else {
    v = "no steady-state throughput: " + std::to_string(scan.steps.size()) + " logical steps logged";
  }
  if (failed) v += "; job " + status;
  s["verdict"] = v;

  // The page shows the verdict, so it is written last.
  if (opt.write_report && !job.dir.empty()) {
    try {
      rep.report_file = WritePerfReportHtml(job, s, scan);
      std::string dirname = job.dir.filename().string();
      s["report"] = {{"path", job.dir_display + "/mt_report/perf.html"}, {"url", opt.report_url_prefix + "/" + dirname + "/perf.html"}};
    } catch (const std::exception& e) {
      s["notes"].push_back(std::string("HTML report not written: ") + e.what());
    }
  } else if (opt.write_report) {
    s["notes"].push_back("no job directory: HTML report not written");
  }
  rep.structured = std::move(s);
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
  if (s["report"].is_object()) t += "\n  report: " + str(s["report"]["path"]) + " (served at " + str(s["report"]["url"]) + ")";
  for (const auto& n : s["notes"]) t += "\n  note: " + str(n);
  return t;
}

}  // namespace mt::tools
