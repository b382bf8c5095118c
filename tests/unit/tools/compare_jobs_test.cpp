// compare_jobs on values whose answer is known: the per-host comparison (uniform shift,
// a few hosts standing out, and no false positives from noise), steady TGS over the
// overlapping step range with spikes excluded, the config diff, the log diff, and the
// log-only fallback when a job has no TSDB.
#include "tools/compare/compare_jobs.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/unit/tools/perf_test_util.h"
#include "tools/compare/compare_config.h"
#include "tools/compare/compare_tsdb.h"
#include "tools/logs/scan_cache.h"

namespace mt::tools {
namespace {

using testing::SynthLog;
using testing::SynthStep;
using testing::TempDir;
using testing::WriteSynthJob;

std::string Host(int i) { return "chi" + std::to_string(2800 + i); }

HostValues Noisy(std::mt19937& rng, int hosts, double mean, double sd, int first = 0) {
  std::normal_distribution<double> n(mean, sd);
  HostValues h;
  for (int i = first; i < first + hosts; ++i) h.values.emplace_back(Host(i), n(rng));
  return h;
}

TEST(CompareHostValues, UniformShiftOnEveryHost) {
  std::mt19937 rng(7);
  HostValues a = Noisy(rng, 24, 18, 0.4), b = Noisy(rng, 24, 35, 0.4);
  MetricComparison c = CompareHostValues("hw_procs_running", false, a, b);
  EXPECT_TRUE(c.significant);
  EXPECT_EQ(c.pattern, "uniform");
  EXPECT_TRUE(c.hosts_consistent);
  EXPECT_EQ(c.hosts_common, 24u);
  EXPECT_NEAR(c.a, 18, 0.5);
  EXPECT_NEAR(c.b, 35, 0.5);
  EXPECT_NEAR(c.delta_pct, 94, 5);
  EXPECT_GT(c.score, 10);
  EXPECT_EQ(c.kind, "contention");
}

TEST(CompareHostValues, FewHostsStandOut) {
  // Job A: four hosts retransmit; job B ran without them, all clean.
  HostValues a, b;
  for (int i = 0; i < 24; ++i) a.values.emplace_back(Host(i), 0);
  a.values[4].second = 1100;
  a.values[16].second = 860;
  a.values[17].second = 870;
  a.values[20].second = 865;
  for (int i = 0; i < 24; ++i)
    if (i != 4 && i != 16 && i != 17 && i != 20) b.values.emplace_back(Host(i), 0);
  MetricComparison c = CompareHostValues("hw_rdma_tx_retx_pkts_total", true, a, b);
  EXPECT_TRUE(c.significant);
  EXPECT_EQ(c.pattern, "hosts");
  EXPECT_FALSE(c.hosts_consistent);
  ASSERT_EQ(c.hosts.size(), 4u);
  EXPECT_EQ(c.hosts[0].first, Host(4));    // most first
  EXPECT_EQ(c.hosts[1].first, Host(17));
  EXPECT_EQ(c.hosts[2].first, Host(20));
  EXPECT_EQ(c.hosts[3].first, Host(16));
  EXPECT_EQ(c.a, 0);   // the median host is clean in both
}

TEST(CompareHostValues, NoFalsePositivesFromNoise) {
  // Two healthy runs that differ only by noise, for metrics of very different scales and
  // noise levels (integer-like gauges, counters near zero, large byte rates).
  std::mt19937 rng(42);
  struct Case {
    const char* name;
    bool counter;
    double mean, sd;
  } cases[] = {{"hw_procs_running", false, 18, 0.5},      {"hw_gpu_temperature_celsius", false, 70, 2},
               {"hw_gpu_power_watts", false, 916, 10},    {"hw_tcp_retransmits_total", true, 0.02, 0.01},
               {"hw_net_rx_bytes_total", true, 2e9, 2e7}, {"hw_io_pressure_some_pct", false, 0.3, 0.2}};
  int false_positives = 0, trials = 0;
  for (int trial = 0; trial < 300; ++trial)
    for (const auto& k : cases) {
      HostValues a = Noisy(rng, 24, k.mean, k.sd), b = Noisy(rng, 24, k.mean, k.sd);
      for (auto* h : {&a, &b})
        for (auto& [_, v] : h->values) v = std::max(0.0, v);
      MetricComparison c = CompareHostValues(k.name, k.counter, a, b);
      false_positives += c.significant;
      ++trials;
    }
  EXPECT_EQ(false_positives, 0) << "of " << trials;
}

TEST(CompareHostValues, HeterogeneityBothJobsShareIsNotADifference) {
  // Quantised small gauges: a few hosts read one step higher in both jobs (24 vs 20 hosts).
  HostValues a, b;
  for (int i = 0; i < 24; ++i) a.values.emplace_back(Host(i), i % 6 == 0 ? 0.07 : 0.06);
  for (int i = 0; i < 20; ++i) b.values.emplace_back(Host(i), i % 7 == 1 ? 0.07 : 0.06);
  MetricComparison c = CompareHostValues("hw_io_pressure_some_pct", false, a, b);
  EXPECT_FALSE(c.significant) << c.pattern;
  EXPECT_TRUE(c.hosts.empty());
}

TEST(CompareHostValues, DifferencesBelowWhatMattersInTheUnitsAreNone) {
  // Quiet hosts make tiny differences many noise units wide: one runnable thread fewer on
  // two hosts of another allocation, a hundredth of a percent of I/O pressure on four.
  HostValues a, b, c, d;
  for (int i = 0; i < 12; ++i) a.values.emplace_back(Host(i), 8);
  for (int i = 0; i < 8; ++i) b.values.emplace_back(Host(100 + i), i < 2 ? 7 : 8);
  EXPECT_FALSE(CompareHostValues("hw_procs_running", false, a, b).significant);
  for (int i = 0; i < 24; ++i) c.values.emplace_back(Host(i), 0.06);
  for (int i = 0; i < 24; ++i) d.values.emplace_back(Host(i), i % 6 == 0 ? 0.05 : 0.06);
  EXPECT_FALSE(CompareHostValues("hw_io_pressure_some_pct", false, c, d).significant);
  // The same hosts four threads busier are a difference.
  HostValues e;
  for (int i = 0; i < 8; ++i) e.values.emplace_back(Host(100 + i), i < 2 ? 14 : 8);
  EXPECT_TRUE(CompareHostValues("hw_procs_running", false, a, e).significant);
}

TEST(CompareHostValues, EveryHostMovingTheSameWayIsSignificantThoughHostsDiffer) {
  // 28 hosts whose levels differ a lot from each other (6..18 runnable threads, drawn anew
  // in each job) all roughly double in B: small against the spread, but on every host.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> base(6, 18), wobble(-1, 1);
  HostValues a, b, c;
  for (int i = 0; i < 28; ++i) {
    a.values.emplace_back(Host(i), std::round(base(rng)));
    b.values.emplace_back(Host(i), std::round(a.values.back().second * 2 + wobble(rng)));
    c.values.emplace_back(Host(i), std::round(base(rng)));   // the same kind of job again: no difference
  }
  MetricComparison m = CompareHostValues("hw_procs_running", false, a, b);
  EXPECT_TRUE(m.significant && m.pattern == "uniform" && m.hosts_consistent) << m.pattern << " " << m.score;
  EXPECT_FALSE(CompareHostValues("hw_procs_running", false, a, c).significant);
}

TEST(CompareHostValues, SmallButRealUniformShiftIsFound) {
  std::mt19937 rng(3);
  // -6.7 % on every host: beyond the 1 % noise floor by more than 5 units.
  HostValues a = Noisy(rng, 24, 900, 2), b = Noisy(rng, 24, 840, 2);
  MetricComparison c = CompareHostValues("hw_gpu_power_watts", false, a, b);
  EXPECT_TRUE(c.significant);
  EXPECT_TRUE(c.hosts_consistent);
  EXPECT_EQ(c.pattern, "uniform");
  // -3 %: consistent, but below 5 × the 1 % floor that absorbs run-to-run drift.
  HostValues d = Noisy(rng, 24, 873, 2);
  MetricComparison e = CompareHostValues("hw_gpu_power_watts", false, a, d);
  EXPECT_FALSE(e.significant);
  EXPECT_TRUE(e.hosts_consistent);
}

TEST(CompareHostValues, EmptySideIsNeverSignificant) {
  HostValues a;
  a.values = {{"x", 1}};
  MetricComparison c = CompareHostValues("hw_x", false, a, HostValues{});
  EXPECT_FALSE(c.significant);
  EXPECT_EQ(c.pattern, "none");
}

SynthLog Job(const std::string& id, double tgs, unsigned seed, int first_step = 0) {
  SynthLog s;
  s.id = id;
  s.first_step = first_step;
  s.steps = 200 - first_step;
  auto rng = std::make_shared<std::mt19937>(seed);
  s.step = [tgs, rng](int k) {
    std::normal_distribution<double> n(0, 0.002 * tgs);
    SynthStep v;
    v.tgs = k < 5 ? 500 : tgs + n(*rng);
    if (k % 50 == 0 && k > 0) v.tgs = tgs * 0.3;   // checkpoint save spikes
    return v;
  };
  return s;
}

TEST(CompareTgs, OverlapOnlySpikesExcludedAndSignificance) {
  TempDir t;
  WriteSynthJob(t.path(), Job("9101", 3295, 1));
  WriteSynthJob(t.path(), Job("9102", 3261, 2, 101));   // restored at step 100
  WriteSynthJob(t.path(), Job("9103", 3295, 3));        // same as 9101 but for noise
  auto scan = [&](const char* id) { return ScanCache::Shared().Get(Workspace(t.path()).Resolve(id).log).data; };
  auto a = scan("9101"), b = scan("9102"), c = scan("9103");
  TgsComparison ab = CompareTgs(a->scan, b->scan, 5);
  ASSERT_TRUE(ab.ok);
  EXPECT_EQ(ab.first_step, 106);   // B's warm-up is its own first 5 steps
  EXPECT_EQ(ab.last_step, 199);
  EXPECT_EQ(ab.a_spikes, 1u);      // step 150
  EXPECT_EQ(ab.b_spikes, 1u);
  EXPECT_NEAR(ab.a, 3295, 3);
  EXPECT_NEAR(ab.b, 3261, 3);
  EXPECT_NEAR(ab.delta_pct, -1.03, 0.1);
  EXPECT_TRUE(ab.significant);
  TgsComparison ac = CompareTgs(a->scan, c->scan, 5);
  ASSERT_TRUE(ac.ok);
  EXPECT_FALSE(ac.significant) << ac.delta_pct << " t=" << ac.t;
  EXPECT_LT(std::fabs(ac.delta_pct), 0.2);
}

TEST(CompareJobs, LogOnlyFallbackConfigAndLogDiff) {
  TempDir t;
  SynthLog a = Job("9101", 3295, 1), b = Job("9102", 3261, 2, 101);
  a.passthrough = "steps=200 _env_NCCL_DEBUG=WARN";
  b.passthrough = "steps=200 enable_single_replica_ckpt_restoring=true _env_NCCL_DEBUG=INFO";
  b.nodelist = "node[01-03,05]";
  a.extra_header = " 0: Config param per_device_batch_size: 4\n 0: Config param run_name: 9101\n";
  b.extra_header = " 0: Config param per_device_batch_size: 8\n 0: Config param run_name: 9102\n";
  WriteSynthJob(t.path(), a);
  WriteSynthJob(t.path(), b);
  Workspace ws(t.path());
  std::vector<JobFiles> jobs = {ws.Resolve("9101"), ws.Resolve("9102")};
  CompareOptions o;
  o.now = "2030-01-01T00:00:00Z";
  Json out = mcp::Encode(CompareJobs(ws, jobs, o, nullptr, nullptr));
  EXPECT_EQ(out["a"], "9101");
  EXPECT_EQ(out["b"], "9102");
  EXPECT_NEAR(out["tgs"]["delta_pct"].get<double>(), -1.03, 0.1);
  EXPECT_FALSE(out["tsdb"]["used"].get<bool>());
  EXPECT_TRUE(out["metrics"].empty());
  EXPECT_NE(out["notes"].dump().find("compared from the logs only"), std::string::npos);
  std::map<std::string, Json> diff;
  for (const auto& d : out["config_diff"]) diff[d["key"].get<std::string>()] = d;
  ASSERT_TRUE(diff.count("enable_single_replica_ckpt_restoring"));
  EXPECT_EQ(diff["enable_single_replica_ckpt_restoring"]["a"], "(unset)");
  EXPECT_EQ(diff["enable_single_replica_ckpt_restoring"]["b"], "true");
  ASSERT_TRUE(diff.count("NCCL_DEBUG"));
  EXPECT_EQ(diff["NCCL_DEBUG"]["kind"], "env");
  ASSERT_TRUE(diff.count("per_device_batch_size"));
  EXPECT_EQ(diff["per_device_batch_size"]["kind"], "config");
  EXPECT_FALSE(diff.count("run_name"));   // per-job values are not differences
  ASSERT_TRUE(diff.count("hosts only in this job"));
  EXPECT_EQ(diff["hosts only in this job"]["a"], "node04");
  EXPECT_EQ(diff["hosts only in this job"]["b"], "node05");
  EXPECT_FALSE(diff.count("steps"));
  // Two jobs with a TSDB directory missing → says which.
  EXPECT_NE(out["tsdb"]["reason"].get<std::string>().find("neither job has"), std::string::npos);
}

TEST(CompareJobs, BadInput) {
  TempDir t;
  WriteSynthJob(t.path(), Job("9101", 3295, 1));
  Workspace ws(t.path());
  std::vector<JobFiles> one = {ws.Resolve("9101")};
  EXPECT_THROW(CompareJobs(ws, one, CompareOptions{}, nullptr, nullptr), std::invalid_argument);
  std::vector<JobFiles> twice = {ws.Resolve("9101"), ws.Resolve("9101")};
  EXPECT_THROW(CompareJobs(ws, twice, CompareOptions{}, nullptr, nullptr), std::invalid_argument);
  EXPECT_THROW(ws.Resolve("../etc"), WorkspaceError);
}

TEST(CompareConfig, SplitPassthrough) {
  auto p = SplitPassthrough("\"steps=450 _env_A=b=c remat\"");
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0], (std::pair<std::string, std::string>{"steps", "450"}));
  EXPECT_EQ(p[1], (std::pair<std::string, std::string>{"_env_A", "b=c"}));
  EXPECT_EQ(p[2], (std::pair<std::string, std::string>{"remat", ""}));
}

}  // namespace
}  // namespace mt::tools
