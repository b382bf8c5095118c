// The scenario generator: the same seed gives the same case, the truth is consistent with
// the scenario it describes, and the overlay does what each effect says.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "launcher/sim/fuzz_overlay.h"
#include "launcher/sim/hostlist.h"
#include "launcher/sim/scenario_fuzz.h"

namespace mt::launch::sim {
namespace {

bool Contains(const std::string& s, const std::string& x) { return s.find(x) != std::string::npos; }

TEST(ScenarioFuzz, SameSeedSameCaseOtherSeedOtherCase) {
  const FuzzCase a = MakeFuzzCase(42), b = MakeFuzzCase(42), c = MakeFuzzCase(43);
  EXPECT_EQ(a.truth_json, b.truth_json);
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  EXPECT_EQ(a.jobs[0].scenario.hosts, b.jobs[0].scenario.hosts);
  EXPECT_EQ(a.jobs[0].effects.size(), b.jobs[0].effects.size());
  EXPECT_NE(a.truth_json, c.truth_json);
}

TEST(ScenarioFuzz, TruthDescribesTheScenarioAndEverythingVaries) {
  std::set<std::string> families, namings, pairs;
  std::set<size_t> sizes;
  std::set<double> starts;
  int decoyed = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    const FuzzCase c = MakeFuzzCase(seed);
    ASSERT_FALSE(c.jobs.empty());
    const Scenario& s = c.jobs[0].scenario;
    sizes.insert(s.hosts.size());
    starts.insert(s.start);
    EXPECT_GE(s.hosts.size(), 4u);
    EXPECT_LE(s.hosts.size(), 64u);
    // Host names survive Slurm's compact form (the log header carries them that way).
    std::vector<std::string> back;
    ASSERT_TRUE(ExpandHostList(CompactHostList(s.hosts), &back)) << CompactHostList(s.hosts);
    EXPECT_EQ(back, s.hosts);
    for (const auto& f : {"\"family\": \"", "\"naming\": \"", "\"pair\": \""}) {
      const size_t p = c.truth_json.find(f);
      if (p == std::string::npos) continue;
      const size_t q = p + std::string(f).size();
      const std::string v = c.truth_json.substr(q, c.truth_json.find('"', q) - q);
      (std::string(f) == "\"family\": \"" ? families : std::string(f) == "\"naming\": \"" ? namings : pairs).insert(v);
    }
    // Every effect targets a host of its job; decoys never land on a culprit.
    for (const auto& j : c.jobs)
      for (const auto& e : j.effects)
        EXPECT_NE(std::find(j.scenario.hosts.begin(), j.scenario.hosts.end(), e.host), j.scenario.hosts.end());
    decoyed += Contains(c.truth_json, "\"decoys\": [{");
    for (const auto& f : s.faults)
      for (const auto& h : f.hosts) EXPECT_TRUE(Contains(c.truth_json, "\"" + h + "\"")) << seed;
    if (c.jobs.size() == 2) {
      EXPECT_NE(c.jobs[0].scenario.job_id, c.jobs[1].scenario.job_id);
    }
  }
  EXPECT_EQ(families.size(), 10u);   // every family, clean runs included
  EXPECT_EQ(namings.size(), 5u);
  EXPECT_EQ(pairs.size(), 5u);
  EXPECT_GE(sizes.size(), 10u);
  EXPECT_GE(starts.size(), 290u);
  EXPECT_GT(decoyed, 60);
}

TEST(FuzzOverlay, EffectsChangeOnlyTheirHostMetricAndTime) {
  std::vector<Effect> fx(5);
  fx[0] = {Effect::Op::kAdd, "hw_procs_running", "a", "", 100, 200, 10, 0};
  fx[1] = {Effect::Op::kRate, "hw_tcp_retransmits_total", "a", "", 100, 1e18, 5, 0};
  fx[2] = {Effect::Op::kDrop, "*", "b", "", 150, 160, 0, 0};
  fx[3] = {Effect::Op::kReset, "hw_context_switches_total", "a", "", 150, 1e18, 0, 0};
  fx[4] = {Effect::Op::kStep, "hw_oom_kills_total", "b", "", 200, 1e18, 1, 0};
  Overlay o(1, fx);
  std::string in;
  for (int t = 90; t <= 210; t += 30) {
    const std::string ts = " " + std::to_string(t) + "\n";
    in += "hw_procs_running{host=\"a\"} 20" + ts + "hw_procs_running{host=\"b\"} 20" + ts;
    in += "hw_tcp_retransmits_total{host=\"a\"} 1000" + ts;
    in += "hw_context_switches_total{host=\"a\"} " + std::to_string(5000 + t) + ts;
    in += "up{host=\"b\"} 1" + ts + "hw_oom_kills_total{host=\"b\"} 0" + ts;
  }
  const std::string out = o.Apply(in);
  EXPECT_TRUE(Contains(out, "hw_procs_running{host=\"a\"} 20 90\n"));
  EXPECT_TRUE(Contains(out, "hw_procs_running{host=\"a\"} 30 120\n"));
  EXPECT_TRUE(Contains(out, "hw_procs_running{host=\"a\"} 20 210\n"));
  EXPECT_TRUE(Contains(out, "hw_procs_running{host=\"b\"} 20 120\n"));
  EXPECT_TRUE(Contains(out, "hw_tcp_retransmits_total{host=\"a\"} 1000 90\n"));
  EXPECT_TRUE(Contains(out, "hw_tcp_retransmits_total{host=\"a\"} 1150 120\n"));   // 5/s over 30 s
  EXPECT_TRUE(Contains(out, "hw_tcp_retransmits_total{host=\"a\"} 1600 210\n"));
  EXPECT_TRUE(Contains(out, "hw_context_switches_total{host=\"a\"} 0 150\n"));     // restarted from 0
  EXPECT_TRUE(Contains(out, "hw_context_switches_total{host=\"a\"} 30 180\n"));
  EXPECT_FALSE(Contains(out, "hw_procs_running{host=\"b\"} 20 150\n"));            // scrape gap
  EXPECT_TRUE(Contains(out, "up{host=\"b\"} 0 150\n"));
  EXPECT_TRUE(Contains(out, "up{host=\"b\"} 1 180\n"));
  EXPECT_TRUE(Contains(out, "hw_oom_kills_total{host=\"b\"} 0 180\n"));
  EXPECT_TRUE(Contains(out, "hw_oom_kills_total{host=\"b\"} 1 210\n"));
}

}  // namespace
}  // namespace mt::launch::sim
