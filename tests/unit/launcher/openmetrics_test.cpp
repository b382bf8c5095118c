// The OpenMetrics files must satisfy everything promtool silently depends on (reference
// components.md §2): # EOF last, # TYPE first, families contiguous, series ascending,
// timestamps in seconds. Checked here with a parser written for the test.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "launcher/sim/metrics_model.h"
#include "launcher/sim/openmetrics_writer.h"
#include "launcher/sim/timeline.h"
#include "tests/unit/status_matchers.h"
#include "tests/unit/launcher/test_util.h"

namespace mt::launch::sim {
namespace {
using base::Errc;
using testing_status::IsOk;
using testing_status::StatusIs;

constexpr const char* kSmall = R"(
job:
  id: "900"
  model: llama2-70b
  hosts: "node[001-002]"
  gpus_per_node: 2
  start: "2026-01-01T00:50:00Z"
  seed: 9
training:
  steps: 1000
  per_device_batch_size: 1
  max_target_length: 4096
  tgs: 400
  compile_s: 60
hardware:
  nics: 2
  procs_running: 18
  scrape_interval_s: 30
faults:
  - kind: rdma_retransmits
    hosts: [node002]
    steps: [200, 400]
    tgs: 300
  - kind: thread_leak
    extra_procs: 17
)";

struct Sample {
  double value, t;
};

struct Parsed {
  std::map<std::string, std::vector<Sample>> series;  // "name{labels}" -> samples in file order
  std::map<std::string, std::string> type_of;         // family -> gauge|counter
  size_t files = 0;
};

// Parses and validates every file; appends to `p`. Fails the test on any violation.
void ParseWindow(const std::string& text, double window_start, Parsed* p) {
  ASSERT_GE(text.size(), 6u);
  ASSERT_EQ(text.substr(text.size() - 6), "# EOF\n");
  std::set<std::string> finished;  // families whose block has ended in this file
  std::string current;             // family of the current block
  std::map<std::string, double> last_ts_this_file;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line == "# EOF") {
      EXPECT_FALSE(std::getline(in, line)) << "data after # EOF";
      break;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream ls(line.substr(7));
      std::string fam, type;
      ls >> fam >> type;
      ASSERT_TRUE(type == "gauge" || type == "counter") << line;
      ASSERT_FALSE(finished.count(fam)) << "family " << fam << " is not contiguous";
      if (!current.empty()) finished.insert(current);
      current = fam;
      p->type_of[fam] = type;
      continue;
    }
    if (line.rfind("# HELP ", 0) == 0) continue;
    ASSERT_NE(line[0], '#') << line;
    const size_t brace = line.find('{');
    const size_t close = line.find("} ");
    ASSERT_NE(brace, std::string::npos) << line;
    ASSERT_NE(close, std::string::npos) << line;
    const std::string name = line.substr(0, brace);
    const std::string want = p->type_of[current] == "counter" ? current + "_total" : current;
    ASSERT_EQ(name, want) << "sample outside its family block: " << line;
    std::istringstream vs(line.substr(close + 2));
    double v = NAN, t = NAN;
    vs >> v >> t;
    ASSERT_TRUE(std::isfinite(v)) << line;
    ASSERT_TRUE(t > 1.5e9 && t < 2.5e9) << "timestamp not in seconds: " << line;
    ASSERT_GE(t, window_start) << line;
    ASSERT_LT(t, window_start + 7200) << line;
    const std::string key = line.substr(0, close + 1);
    auto& s = p->series[key];
    if (!s.empty()) {
      ASSERT_GT(t, s.back().t) << "series not ascending: " << key;
      if (p->type_of[current] == "counter") {
        ASSERT_GE(v, s.back().value) << "counter went down: " << key;
      }
    }
    s.push_back({v, t});
  }
  p->files++;
}

Parsed WriteAndParse(const Scenario& s, const test::ScratchDir& dir, OpenMetricsStats* stats) {
  const Timeline tl = BuildTimeline(s);
  const MetricsModel model(s, tl);
  std::vector<std::filesystem::path> files;
  EXPECT_THAT(WriteOpenMetricsWindows(model, dir.path(),
                                      [&](const std::filesystem::path& f) {
                                        files.push_back(f);
                                        return base::Status::Ok();
                                      },
                                      stats),
              IsOk());
  Parsed p;
  for (const auto& f : files) {
    const double w = std::stod(f.filename().string().substr(7));  // window-<start>.om
    EXPECT_EQ(std::fmod(w, 7200), 0);
    ParseWindow(test::ReadAll(f), w, &p);
  }
  return p;
}

double MeanOf(const std::vector<Sample>& v, double a, double b) {
  double sum = 0;
  int n = 0;
  for (const auto& s : v)
    if (s.t >= a && s.t <= b) sum += s.value, ++n;
  return n ? sum / n : NAN;
}

TEST(OpenMetrics, SmallScenarioIsValidAndCarriesTheFaults) {
  Scenario s;
  std::string err;
  ASSERT_TRUE(ParseScenario(kSmall, "", &s, &err)) << err;
  test::ScratchDir dir;
  OpenMetricsStats stats;
  const Parsed p = WriteAndParse(s, dir, &stats);
  const Timeline tl = BuildTimeline(s);
  EXPECT_GE(p.files, 2u);  // the run crosses a 2 h block boundary
  EXPECT_EQ(p.type_of.at("hw_rdma_tx_retx_pkts"), "counter");
  EXPECT_EQ(p.type_of.at("hw_gpu_power_watts"), "gauge");
  size_t samples = 0;
  for (const auto& [k, v] : p.series) samples += v.size();
  EXPECT_EQ(samples, stats.samples);

  // Retransmits: only node002, only while steps 200..400 ran.
  const double a = tl.StepStart(200), b = tl.StepEnd(400);
  double retx_node1 = 0, retx_node2_fault = 0, retx_node2_outside = 0;
  for (const auto& [key, v] : p.series) {
    if (key.rfind("hw_rdma_tx_retx_pkts_total{", 0) != 0) continue;
    for (size_t i = 1; i < v.size(); ++i) {
      const double inc = v[i].value - v[i - 1].value;
      if (key.find("host=\"node001\"") != std::string::npos) retx_node1 += inc;
      else if (v[i].t > a + 60 && v[i].t < b) retx_node2_fault += inc;
      else if (v[i].t < a - 60 || v[i].t > b + 60) retx_node2_outside += inc;
    }
  }
  EXPECT_EQ(retx_node1, 0);
  EXPECT_EQ(retx_node2_outside, 0);
  EXPECT_GT(retx_node2_fault, 1000);

  // Thread leak: ~18 + 17 runnable threads per host during training.
  const auto& procs = p.series.at("hw_procs_running{host=\"node001\",instance=\"node001:9400\",job=\"node_hw\"}");
  EXPECT_NEAR(MeanOf(procs, tl.StepStart(50), tl.StepEnd(900)), 35, 1);
  // tb_* series come from node 0 with the step wall times.
  const auto& tb_step = p.series.at("tb_step{host=\"node001\",instance=\"node001:9400\",job=\"node_hw\"}");
  EXPECT_EQ(tb_step.size(), tl.steps.size());
  EXPECT_EQ(tb_step.back().value, 999);
  EXPECT_NEAR(tb_step.back().t, tl.steps.back().end, 0.1);
  EXPECT_TRUE(p.series.count("up{host=\"node002\",instance=\"node002:55080\",job=\"ray\"}"));
  EXPECT_TRUE(p.series.count("hw_gpu_clock_mhz{gpu=\"1\",host=\"node002\",instance=\"node002:9400\",job=\"node_hw\",type=\"mclk\"}"));
}

TEST(OpenMetrics, WindowsAreDeterministic) {
  Scenario s;
  std::string err;
  ASSERT_TRUE(ParseScenario(kSmall, "", &s, &err)) << err;
  const Timeline tl = BuildTimeline(s);
  const MetricsModel model(s, tl);
  test::ScratchDir d1, d2;
  std::vector<std::filesystem::path> f1, f2;
  auto collect = [](std::vector<std::filesystem::path>* v) {
    return [v](const std::filesystem::path& f) {
      v->push_back(f);
      return base::Status::Ok();
    };
  };
  ASSERT_THAT(WriteOpenMetricsWindows(model, d1.path(), collect(&f1), nullptr), IsOk());
  const MetricsModel model2(s, tl);
  ASSERT_THAT(WriteOpenMetricsWindows(model2, d2.path(), collect(&f2), nullptr), IsOk());
  ASSERT_EQ(f1.size(), f2.size());
  for (size_t i = 0; i < f1.size(); ++i) EXPECT_EQ(test::ReadAll(f1[i]), test::ReadAll(f2[i]));
}

TEST(OpenMetrics, CaseStudy8104IsValid) {
  test::ScratchDir dir;
  OpenMetricsStats stats;
  const Parsed p = WriteAndParse(test::CaseStudy("8104"), dir, &stats);
  EXPECT_GT(stats.samples, 100000u);
  EXPECT_TRUE(p.type_of.count("tb_perf_per_device_tokens_per_sec"));
}

TEST(MetricsModel, Hang7877PowerFallsWhileUtilisationStaysFull) {
  const Scenario s = test::CaseStudy("7877");
  const Timeline tl = BuildTimeline(s);
  const MetricsModel m(s, tl);
  const double before = tl.busy_wait_start - 1800, during = tl.busy_wait_start + 1800;
  double p_before = 0, p_during = 0, u_before = 0, u_during = 0;
  int n = 0;
  for (const auto& sr : m.series()) {
    if (sr.family == Family::kGpuPower) {
      p_before += m.Gauge(sr, before, 1);
      p_during += m.Gauge(sr, during, 2);
      ++n;
    }
    if (sr.family == Family::kRayGpuUtil) {
      u_before += m.Gauge(sr, before, 1);
      u_during += m.Gauge(sr, during, 2);
    }
  }
  ASSERT_EQ(n, 24 * 8);
  EXPECT_NEAR(p_before / n, 900, 15);
  EXPECT_NEAR(p_during / n, 300, 10);
  EXPECT_GE(u_before / n, 99.5);
  EXPECT_GE(u_during / n, 99.5);
}

TEST(MetricsModel, Heartbeat8043HostsDrawFullPowerUntilTheCrash) {
  const Scenario s = test::CaseStudy("8043");
  const Timeline tl = BuildTimeline(s);
  const MetricsModel m(s, tl);
  for (const auto& sr : m.series()) {
    if (sr.family != Family::kGpuPower || (sr.host < 8 || sr.host > 10)) continue;
    for (double t = tl.heartbeat_stop; t < tl.crash_time - 30; t += 60) {
      if (m.ActivityAt(sr.host, t) == Activity::kCheckpoint) continue;
      EXPECT_NEAR(m.Gauge(sr, t, static_cast<uint64_t>(t)), 900, 30) << s.hosts[sr.host];
    }
    EXPECT_EQ(m.ActivityAt(sr.host, tl.job_end + 60), Activity::kAbsent);  // nothing after the job
  }
}

TEST(OpenMetrics, ValueFormatting) {
  std::string out;
  AppendValue(out, 309237645312.0);
  out += ' ';
  AppendValue(out, 900.5);
  out += ' ';
  AppendValue(out, 0);
  EXPECT_EQ(out, "309237645312 900.5 0");
}

}  // namespace
}  // namespace mt::launch::sim
