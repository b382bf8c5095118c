// perf_analysis on synthetic logs whose numbers are known: windows, steady TGS,
// entries per step, MFU from the log or from the peak table, periodic overhead, loss
// trend, artifacts (HLO collectives, xplane, TFRecord files) and the HTML report.
#include "tools/perf/perf_analysis.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "tests/unit/tools/perf_test_util.h"
#include "tools/perf/hlo_collectives.h"
#include "tools/common/html_escape.h"
#include "tools/catalog/perf_analysis_tool.h"
#include "tools/catalog/validated_input.h"
#include "tools/perf/perf_artifacts.h"
#include "tools/perf/perf_peaks.h"
#include "tools/perf/report_perf_html.h"

namespace mt::tools {
namespace {

using testing::SynthLog;
using testing::SynthStep;
using testing::TempDir;
using testing::WriteSynthJob;

constexpr const char* kNow = "2030-01-01T00:00:00Z";

// Warm-up steps slow; steady TGS alternating 3290/3310 (mean 3300); every 20th step a
// checkpoint-like spike (step time +25 s); loss falling linearly.
SynthLog PeriodicLog() {
  SynthLog s;
  s.ranks = 8;
  s.steps = 100;
  s.step = [](int k) {
    SynthStep v;
    if (k < 5) {
      v.seconds = k == 0 ? 150 : 12;
      v.tgs = k == 0 ? 200 : 2800;
    } else {
      v.tgs = k % 2 ? 3290 : 3310;
      v.seconds = 10;
      if (k % 20 == 0) {
        v.seconds = 35;
        v.tgs = 940;
      }
    }
    v.tflops = v.tgs / 4;
    v.mfu = v.tflops / 2500 * 100;
    v.loss = 10 - 0.05 * k;
    return v;
  };
  s.after_step = [](int k) { return k % 20 == 0 && k > 0 ? " 0: Saved a checkpoint at step " + std::to_string(k) + "\n" : std::string(); };
  return s;
}

TEST(PerfAnalysis, WindowsSteadyTgsAndEntriesPerStep) {
  TempDir t;
  WriteSynthJob(t.path(), PeriodicLog());
  Workspace ws(t.path());
  PerfOptions o;
  o.now = kNow;
  PerfReport r = AnalyzePerf(ws.Resolve("9001"), o);
  ASSERT_TRUE(r.steady.ok);
  EXPECT_EQ(r.steady.entries_per_step, 8);
  // 100 steps: warm-up 0–4, 95 follow → tail = 9 steps (91–99), steady 5–90.
  ASSERT_EQ(r.windows.size(), 3u);
  EXPECT_EQ(r.windows[0].first_step, 0);
  EXPECT_EQ(r.windows[0].last_step, 4);
  EXPECT_EQ(r.windows[1].first_step, 5);
  EXPECT_EQ(r.windows[1].last_step, 90);
  EXPECT_EQ(r.windows[2].first_step, 91);
  EXPECT_EQ(r.windows[2].last_step, 99);
  // Steady window: 86 steps, 4 of them spikes (20, 40, 60, 80) at 940.
  EXPECT_EQ(r.windows[1].tgs.n, 86u);
  double expect = 0;
  for (int k = 5; k <= 90; ++k) expect += k % 20 == 0 ? 940 : (k % 2 ? 3290 : 3310);
  expect /= 86;
  EXPECT_NEAR(r.steady.mean, expect, 1e-6);
  EXPECT_EQ(r.windows[1].tgs.min, 940);
  EXPECT_EQ(r.windows[1].tgs.max, 3310);
  EXPECT_EQ(r.windows[1].tgs.p50, 3290 + (r.windows[1].tgs.p50 > 3290 ? 20 : 0));
  const Json& s = r.structured;
  EXPECT_EQ(s["steps"]["logical"], 100);
  EXPECT_EQ(s["steps"]["warmup_steps"], 5);
  EXPECT_EQ(s["mfu"]["source"], "log");
  EXPECT_NEAR(s["steady"]["mfu_pct"].get<double>(), expect / 4 / 2500 * 100, 0.01);
  EXPECT_EQ(s["status"], "completed");   // the last of steps=100 was logged
}

TEST(PerfAnalysis, PeriodicOverheadIsDetectedAndQuantified) {
  TempDir t;
  WriteSynthJob(t.path(), PeriodicLog());
  Workspace ws(t.path());
  PerfOptions o;
  o.now = kNow;
  PerfReport r = AnalyzePerf(ws.Resolve("9001"), o);
  ASSERT_TRUE(r.overhead.detected);
  EXPECT_EQ(r.overhead.spike_steps, (std::vector<int64_t>{20, 40, 60, 80}));
  ASSERT_TRUE(r.overhead.period_steps.has_value());
  EXPECT_EQ(*r.overhead.period_steps, 20);
  EXPECT_NEAR(r.overhead.extra_seconds_per_spike, 25, 1e-9);
  // 95 post-warm-up steps: 91 × 10 s + 4 × 35 s = 1050 s, of which 100 s extra.
  EXPECT_NEAR(r.overhead.overhead_pct, 100.0 / 1050 * 100, 1e-6);
  EXPECT_EQ(r.overhead.at_checkpoints, 4u);
  EXPECT_NE(r.structured["verdict"].get<std::string>().find("every 20 steps"), std::string::npos);
  EXPECT_EQ(r.structured["loss"]["trend"], "decreasing");
  EXPECT_NEAR(r.structured["loss"]["slope_per_100_steps"].get<double>(), -5, 1e-3);
}

TEST(PerfAnalysis, NoSpikesNoOverhead) {
  TempDir t;
  SynthLog s;
  s.step = [](int k) {
    SynthStep v;
    v.tgs = 3300 + (k % 3);
    return v;
  };
  WriteSynthJob(t.path(), s);
  Workspace ws(t.path());
  PerfOptions o;
  o.now = kNow;
  PerfReport r = AnalyzePerf(ws.Resolve("9001"), o);
  EXPECT_FALSE(r.overhead.detected);
  EXPECT_TRUE(r.overhead.spike_steps.empty());
  EXPECT_EQ(r.structured["periodic_overhead"]["period_steps"], nullptr);
}

TEST(PerfAnalysis, MfuComputedFromThePeakTableWhenTheLogHasNone) {
  TempDir t;
  SynthLog s;
  s.extra_header = " 0: [MFU] MFU tracking enabled (gpu=MI300X, dtype=bf16, peak=1307 TFLOP/s, source=table)\n";
  s.step = [](int) {
    SynthStep v;
    v.tflops = 653.5;   // half of the MI300X bf16 peak
    return v;
  };
  WriteSynthJob(t.path(), s);
  testing::WriteFile(t.path() / "peaks.yaml", "MI300X: {bf16: 1307, fp8: 2615}\nMI355X: {bf16: 2500}\n");
  Workspace ws(t.path());
  PerfOptions o;
  o.now = kNow;
  o.peaks_file = t.path() / "peaks.yaml";
  PerfReport r = AnalyzePerf(ws.Resolve("9001"), o);
  const Json& m = r.structured["mfu"];
  EXPECT_EQ(m["source"], "computed");
  EXPECT_EQ(m["gpu"], "MI300X");
  EXPECT_EQ(m["peak_tflops"], 1307);
  EXPECT_EQ(m["peak_source"], (t.path() / "peaks.yaml").string());
  EXPECT_NEAR(r.structured["steady"]["mfu_pct"].get<double>(), 50, 1e-6);
  // The caller's GPU wins over the log's.
  o.gpu = "MI355X";
  r = AnalyzePerf(ws.Resolve("9001"), o);
  EXPECT_NEAR(r.structured["steady"]["mfu_pct"].get<double>(), 653.5 / 2500 * 100, 1e-6);
  // Unknown GPU: no MFU, and a note that says how to get one.
  o.gpu = "Z9000";
  r = AnalyzePerf(ws.Resolve("9001"), o);
  EXPECT_TRUE(r.structured["steady"]["mfu_pct"].is_null());
  ASSERT_FALSE(r.structured["notes"].empty());
  EXPECT_NE(r.structured["notes"].dump().find("no peak for Z9000"), std::string::npos);
}

TEST(PerfAnalysis, UnknownGpuWithoutMfuSaysSo) {
  TempDir t;
  WriteSynthJob(t.path(), SynthLog{});
  Workspace ws(t.path());
  PerfOptions o;
  o.now = kNow;
  PerfReport r = AnalyzePerf(ws.Resolve("9001"), o);
  EXPECT_TRUE(r.structured["steady"]["mfu_pct"].is_null());
  EXPECT_NE(r.structured["notes"].dump().find("pass `gpu`"), std::string::npos);
}

TEST(PerfAnalysis, WarmupIsConfigurableAndShortRunsHaveNoTail) {
  TempDir t;
  SynthLog s;
  s.steps = 15;   // the batch-sweep skill's runs: steps 0–14, steady 5–14
  s.step = [](int k) {
    SynthStep v;
    v.tgs = k < 5 ? 100 : 1000 + k;
    return v;
  };
  WriteSynthJob(t.path(), s);
  SteadyTgs st = SteadyTgsOfLog(t.path() / "9001-JAX-synthetic-steps_100.log");
  ASSERT_TRUE(st.ok);
  EXPECT_EQ(st.first_step, 5);
  EXPECT_EQ(st.last_step, 14);
  EXPECT_EQ(st.steps, 10u);
  EXPECT_NEAR(st.mean, 1009.5, 1e-9);
  SteadyTgs st2 = SteadyTgsOfLog(t.path() / "9001-JAX-synthetic-steps_100.log", 10);
  EXPECT_EQ(st2.first_step, 10);
  EXPECT_NEAR(st2.mean, 1012, 1e-9);
  SteadyTgs all = SteadyTgsOfLog(t.path() / "9001-JAX-synthetic-steps_100.log", 20);
  EXPECT_FALSE(all.ok);
  EXPECT_THROW(SteadyTgsOfLog(t.path() / "missing.log"), std::runtime_error);
}

TEST(PerfAnalysis, BadOptionsAreRefused) {
  TempDir t;
  WriteSynthJob(t.path(), SynthLog{});
  Workspace ws(t.path());
  PerfOptions o;
  o.warmup_steps = -1;
  EXPECT_THROW(AnalyzePerf(ws.Resolve("9001"), o), std::invalid_argument);
  // Out-of-range arguments stop at the tool's schema, for MCP and CLI alike.
  EXPECT_THROW(ValidatedInput<PerfInput>(PerfAnalysisTool(t.path()), Json{{"job", "x"}, {"warmup_steps", 1000001}}),
               std::invalid_argument);
}

TEST(PerfAnalysis, HtmlReportIsWrittenSelfContainedWithData) {
  TempDir t;
  auto dir = WriteSynthJob(t.path(), PeriodicLog());
  Workspace ws(t.path());
  PerfOptions o;
  o.now = kNow;
  PerfReport r = AnalyzePerf(ws.Resolve("9001"), o);
  ASSERT_EQ(r.report_file, dir / "mt_report" / "perf.html");
  EXPECT_EQ(r.structured["report"]["url"], "/reports/9001-JAX-synthetic-steps_100/perf.html");
  std::string html = testing::ReadFile(r.report_file);
  EXPECT_NE(html.find("<svg id=\"tgs-chart\""), std::string::npos);
  // The page carries the answer's verdict (it is written after the verdict is known).
  ASSERT_FALSE(r.structured["verdict"].get<std::string>().empty());
  EXPECT_NE(html.find("<p class=\"verdict\">" + HtmlEscape(r.structured["verdict"].get<std::string>()) + "</p>"), std::string::npos);
  EXPECT_NE(html.find("data-points=\"100\""), std::string::npos);   // TGS and loss: one point per step
  EXPECT_NE(html.find("<svg id=\"steptime-chart\""), std::string::npos);
  EXPECT_NE(html.find("<polyline class=\"series\" points=\""), std::string::npos);
  // Nothing external: no scheme-qualified URL and no src/href at all.
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  // No temp file left behind.
  size_t files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir / "mt_report")) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
  // report: false writes nothing.
  std::filesystem::remove_all(dir / "mt_report");
  o.write_report = false;
  r = AnalyzePerf(ws.Resolve("9001"), o);
  EXPECT_FALSE(std::filesystem::exists(dir / "mt_report"));
  EXPECT_TRUE(r.structured["report"].is_null());
}

TEST(PerfAnalysis, HtmlEscapesWhatTheLogSays) {
  EXPECT_EQ(HtmlEscape("<script>\"a\"&'b'"), "&lt;script&gt;&quot;a&quot;&amp;&#39;b&#39;");
}

TEST(PerfAnalysis, ReportIsNotWrittenThroughASymlink) {
  TempDir t;
  auto dir = WriteSynthJob(t.path(), SynthLog{});
  std::filesystem::create_directories(t.path() / "elsewhere");
  std::filesystem::create_directory_symlink(t.path() / "elsewhere", dir / "mt_report");
  Workspace ws(t.path());
  PerfOptions o;
  o.now = kNow;
  PerfReport r = AnalyzePerf(ws.Resolve("9001"), o);
  EXPECT_TRUE(r.structured["report"].is_null());
  EXPECT_NE(r.structured["notes"].dump().find("symlink"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_empty(t.path() / "elsewhere"));
}

TEST(HloCollectives, CountsKindsAsyncAndBytes) {
  HloCollectives h = ScanHloCollectives(std::filesystem::path(MT_PERF_FIXTURES) / "module_0001.jit_train_step.gpu_after_optimizations.txt");
  ASSERT_EQ(h.kinds.count("all-reduce"), 1u);
  EXPECT_EQ(h.kinds["all-reduce"].count, 2u);
  EXPECT_EQ(h.kinds["all-reduce"].async_count, 1u);
  EXPECT_EQ(h.kinds["all-reduce"].bytes, 1024u * 1024 * 4 + 4096u * 2);
  EXPECT_EQ(h.kinds["all-gather"].count, 1u);
  EXPECT_EQ(h.kinds["all-gather"].async_count, 1u);
  EXPECT_EQ(h.kinds["all-gather"].bytes, 8u * 4096 * 2);   // the output of the start tuple
  EXPECT_EQ(h.kinds["reduce-scatter"].count, 1u);
  EXPECT_EQ(h.kinds["reduce-scatter"].bytes, 512u * 4096 * 2);
  EXPECT_EQ(h.kinds["all-to-all"].count, 1u);
  EXPECT_EQ(h.kinds["collective-permute"].count, 1u);
  EXPECT_EQ(h.kinds["collective-permute"].async_count, 1u);
  EXPECT_EQ(h.kinds.count("fusion"), 0u);
}

TEST(HloCollectives, ShapeBytes) {
  EXPECT_EQ(HloShapeBytes("bf16[8192,4096]{1,0}"), 8192u * 4096 * 2);
  EXPECT_EQ(HloShapeBytes("f32[]"), 4u);
  EXPECT_EQ(HloShapeBytes("(f32[2], bf16[4,4])"), 8u + 32u);
  EXPECT_EQ(HloShapeBytes("f8e4m3fn[16]"), 16u);
  EXPECT_EQ(HloShapeBytes("token[]"), 0u);
  EXPECT_EQ(HloShapeBytes(""), 0u);
}

void WriteRecords(const std::filesystem::path& p, int n, bool torn) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::binary);
  for (int i = 0; i < n; ++i) {
    std::string data(10 + i, 'x');
    uint64_t len = data.size();
    uint32_t crc = 0;
    f.write(reinterpret_cast<const char*>(&len), 8);
    f.write(reinterpret_cast<const char*>(&crc), 4);
    f.write(data.data(), static_cast<std::streamsize>(data.size()));
    f.write(reinterpret_cast<const char*>(&crc), 4);
  }
  if (torn) f.write("\x40\0\0\0\0\0\0\0\0\0\0\0abc", 15);
}

TEST(PerfArtifacts, FindsProfilesHloAndEventFiles) {
  TempDir t;
  auto job = t.path() / "job";
  testing::WriteFile(job / "run/tensorboard/plugins/profile/2026_03_03_16_30_00/chi2864.xplane.pb", std::string(100, 'p'));
  testing::WriteFile(job / "run/tensorboard/plugins/profile/2026_03_03_16_30_00/chi2865.xplane.pb", std::string(50, 'p'));
  std::filesystem::copy_file(std::filesystem::path(MT_PERF_FIXTURES) / "module_0001.jit_train_step.gpu_after_optimizations.txt",
                             (std::filesystem::create_directories(job / "xla_dump"), job / "xla_dump/module_0001.jit_train_step.gpu_after_optimizations.txt"));
  WriteRecords(job / "run/tensorboard/events.out.tfevents.1.chi2864", 7, false);
  WriteRecords(job / "run/tensorboard/events.out.tfevents.2.chi2864", 3, true);
  // A symlink out of the job is not followed.
  testing::WriteFile(t.path() / "outside/xla_dump/module_9.gpu_after_optimizations.txt", "x = f32[] all-reduce(y)\n");
  std::filesystem::create_directory_symlink(t.path() / "outside", job / "artifact");
  PerfArtifacts a = FindPerfArtifacts(job);
  ASSERT_EQ(a.profiles.size(), 1u);
  EXPECT_EQ(a.profiles[0].dir, "run/tensorboard/plugins/profile/2026_03_03_16_30_00");
  EXPECT_EQ(a.profiles[0].files.size(), 2u);
  EXPECT_EQ(a.profiles[0].bytes, 150u);
  ASSERT_EQ(a.hlo.size(), 1u);
  EXPECT_EQ(a.hlo[0].collectives.kinds["all-reduce"].count, 2u);
  ASSERT_EQ(a.event_files.size(), 2u);
  EXPECT_EQ(a.event_files[0].records, 7u);
  EXPECT_FALSE(a.event_files[0].truncated);
  EXPECT_EQ(a.event_files[1].records, 3u);
  EXPECT_TRUE(a.event_files[1].truncated);
  Json j = mcp::Encode(DescribeArtifacts(a));
  EXPECT_EQ(j["hlo_dumps"][0]["collectives"], 6);
  EXPECT_EQ(j["hlo_dumps"][0]["async_collectives"], 3);
}

TEST(GpuPeaks, TableLookupAndErrors) {
  TempDir t;
  testing::WriteFile(t.path() / "p.yaml", "mi355x: {bf16: 2500, FP8: 5000}\n");
  GpuPeaks p = LoadGpuPeaks(t.path() / "p.yaml");
  EXPECT_EQ(p.Find("MI355X", "fp8"), 5000);
  EXPECT_EQ(p.Find("mi355x", "bfloat16"), 2500);
  EXPECT_EQ(p.Find("MI355X", "fp16"), 2500);   // falls back to bf16
  EXPECT_FALSE(p.Find("H100", "bf16"));
  testing::WriteFile(t.path() / "bad.yaml", "MI355X: {bf16: fast}\n");
  EXPECT_THROW(LoadGpuPeaks(t.path() / "bad.yaml"), std::runtime_error);
  testing::WriteFile(t.path() / "neg.yaml", "MI355X: {bf16: -1}\n");
  EXPECT_THROW(LoadGpuPeaks(t.path() / "neg.yaml"), std::runtime_error);
  EXPECT_THROW(LoadGpuPeaks(t.path() / "missing.yaml"), std::runtime_error);
  // The shipped table has the figures.
  GpuPeaks shipped = LoadGpuPeaks(std::filesystem::path(MT_SOURCE_DIR) / "configs/gpu_peaks.yaml");
  EXPECT_EQ(shipped.Find("MI355X", "bf16"), 2500);
  EXPECT_EQ(shipped.Find("MI300X", "bf16"), 1307);
  EXPECT_EQ(shipped.Find("H100", "bf16"), 989);
  EXPECT_EQ(shipped.Find("H200", "bf16"), 989);
  EXPECT_EQ(shipped.Find("B200", "bf16"), 2250);
}

}  // namespace
}  // namespace mt::tools
