// Host attribution's statistical core: a host is blamed for moving with the symptom
// against its own baseline and the hosts that did not move; decoys that were noisy before
// the slowdown, uniform shifts and noise are not blamed.
#include <gtest/gtest.h>

#include <random>

#include "tools/tsdb/host_shift.h"

namespace mt::tools {
namespace {

// Training from t=0 to t=6000 s, a slowdown from 3000 s on, 30 s scrapes.
Symptom SlowFrom3000() {
  Symptom s;
  s.kind = "slowdown";
  s.train_t0 = 0;
  s.progress_end = 6000;
  s.scrape_s = 30;
  s.slow.push_back({100, 200, 3000, 6000, -20});
  return s;
}

// A host's signal: `base` plus noise, `during` added inside [from, to).
HostSeries Host(const std::string& name, double base, double noise, std::mt19937& rng, double add = 0, double from = 1e18,
                double to = 1e18) {
  std::uniform_real_distribution<double> u(-1, 1);
  HostSeries h{name, {}};
  for (double t = 0; t <= 6000; t += 30) h.points.push_back({t, base + noise * u(rng) + (t >= from && t < to ? add : 0)});
  return h;
}

std::vector<std::string> Culprits(const SegmentShifts& s) {
  std::vector<std::string> out;
  for (const auto& h : s.hosts)
    if (h.culprit) out.push_back(h.host);
  return out;
}

TEST(HostShift, BlamesTheHostThatMovesWithTheSymptomNotTheDecoys) {
  std::mt19937 rng(1);
  std::vector<HostSeries> hosts;
  for (int i = 0; i < 12; ++i) hosts.push_back(Host("n" + std::to_string(i), 72, 2, rng));
  hosts.push_back(Host("hot", 92, 2, rng));                      // hot for the whole run: a decoy
  hosts.push_back(Host("blip", 72, 2, rng, 30, 1200, 1500));     // a burst well before the onset
  hosts.push_back(Host("culprit", 72, 2, rng, 28, 3000));        // throttling from the onset on
  Symptom s = SlowFrom3000();
  SegmentShifts r = ShiftsInSegment(hosts, s, s.slow[0], 6, 90);
  EXPECT_EQ(Culprits(r), std::vector<std::string>{"culprit"});
  EXPECT_FALSE(r.uniform);
  for (const auto& h : r.hosts) {
    if (h.host != "culprit") continue;
    EXPECT_NEAR(h.shift, 28, 2);
    EXPECT_GE(h.onset, 3000);
    EXPECT_LE(h.onset, 3060);
  }
}

TEST(HostShift, AShiftEveryHostSharesIsUniformAndBlamesNoHost) {
  std::mt19937 rng(2);
  std::vector<HostSeries> hosts;
  for (int i = 0; i < 16; ++i) hosts.push_back(Host("n" + std::to_string(i), 20, 2, rng, 25, 3000));
  Symptom s = SlowFrom3000();
  SegmentShifts r = ShiftsInSegment(hosts, s, s.slow[0], 4, 90);
  EXPECT_TRUE(r.uniform);
  EXPECT_NEAR(r.median_shift, 25, 2);
  EXPECT_TRUE(Culprits(r).empty());
}

TEST(HostShift, HalfTheHostsMayBeCulprits) {
  // Four hosts, two throttled: the median shift is a culprit's own; the lower quartile is not.
  std::mt19937 rng(3);
  std::vector<HostSeries> hosts = {Host("a", 72, 2, rng, 30, 3000), Host("b", 72, 2, rng), Host("c", 72, 2, rng),
                                   Host("d", 72, 2, rng, 26, 3000)};
  Symptom s = SlowFrom3000();
  SegmentShifts r = ShiftsInSegment(hosts, s, s.slow[0], 6, 90);
  EXPECT_EQ(Culprits(r), (std::vector<std::string>{"a", "d"}));
}

TEST(HostShift, ALateHostIsJudgedAgainstTheOthersOnly) {
  std::mt19937 rng(4);
  std::vector<HostSeries> hosts;
  for (int i = 0; i < 8; ++i) hosts.push_back(Host("n" + std::to_string(i), 5, 1, rng));
  HostSeries late = Host("late", 5, 1, rng), late_hot = Host("late_hot", 5, 1, rng, 200, 0);
  late.points.erase(late.points.begin(), late.points.begin() + 110);          // first scraped after the onset
  late_hot.points.erase(late_hot.points.begin(), late_hot.points.begin() + 110);
  hosts.push_back(late);
  hosts.push_back(late_hot);
  Symptom s = SlowFrom3000();
  SegmentShifts r = ShiftsInSegment(hosts, s, s.slow[0], 5, 90);
  // Level with the others: nothing to blame. Far above all of them: named, without an own baseline.
  EXPECT_EQ(Culprits(r), std::vector<std::string>{"late_hot"});
  for (const auto& h : r.hosts) EXPECT_EQ(h.own_baseline, h.host != "late" && h.host != "late_hot") << h.host;
}

TEST(HostShift, NoiseAloneBlamesNoHost) {
  // 300 clusters of 4–64 hosts whose signals are noise of different levels and amplitudes.
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> size(4, 64);
  std::uniform_real_distribution<double> level(0, 100), amp(0.1, 3);
  int blamed = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<HostSeries> hosts;
    const int n = size(rng);
    for (int i = 0; i < n; ++i) hosts.push_back(Host("n" + std::to_string(i), level(rng), amp(rng), rng));
    Symptom s = SlowFrom3000();
    blamed += !Culprits(ShiftsInSegment(hosts, s, s.slow[0], 5, 90)).empty();
  }
  EXPECT_EQ(blamed, 0);
}

TEST(HostShift, AFaultSoonAfterTheFirstStepStillHasABaseline) {
  // 60 s scrapes, training from 0, the slowdown from 400 s: the usual 180 s margins would
  // leave no healthy sample; narrower ones keep five, and the shared shift is found.
  std::mt19937 rng(7);
  std::vector<HostSeries> hosts;
  for (int i = 0; i < 4; ++i) {
    HostSeries h = Host("n" + std::to_string(i), 30, 1.5, rng, 26, 400);
    std::vector<TsdbPoint> every_minute;
    for (const auto& p : h.points)
      if (static_cast<long>(p.t) % 60 == 0) every_minute.push_back(p);
    h.points = every_minute;
    hosts.push_back(h);
  }
  Symptom s = SlowFrom3000();
  s.scrape_s = 60;
  s.slow[0].t0 = 400;
  SegmentShifts r = ShiftsInSegment(hosts, s, s.slow[0], 4, 180);
  ASSERT_EQ(r.hosts.size(), 4u);
  for (const auto& h : r.hosts) EXPECT_TRUE(h.own_baseline) << h.host;
  EXPECT_TRUE(r.uniform);
}

TEST(HostShift, AHostThatCooledLessThanTheOthersIsNoCulprit) {
  // The whole job slowed (less load, GPUs 8 °C cooler); one host stayed at its level. It
  // stands out from the others, but nothing on it rose with the symptom.
  std::mt19937 rng(8);
  std::vector<HostSeries> hosts;
  for (int i = 0; i < 12; ++i) hosts.push_back(Host("n" + std::to_string(i), 72, 1, rng, -8, 3000));
  hosts.push_back(Host("steady", 72, 1, rng));
  Symptom s = SlowFrom3000();
  EXPECT_TRUE(Culprits(ShiftsInSegment(hosts, s, s.slow[0], 6, 90)).empty());
}

TEST(HostShift, ASingleScrapeSpikeInAShortPhaseIsNoLevel) {
  // A phase with two samples in it, one of them a spike: no level, no verdict.
  std::mt19937 rng(9);
  std::vector<HostSeries> hosts;
  for (int i = 0; i < 8; ++i) hosts.push_back(Host("n" + std::to_string(i), 12, 1, rng));
  for (auto& p : hosts[3].points)
    if (p.t == 3030) p.v = 70;
  Symptom s = SlowFrom3000();
  SlowSegment shortphase{100, 102, 3000, 3059, -10};
  EXPECT_TRUE(ShiftsInSegment(hosts, s, shortphase, 4, 90).hosts.empty());
}

TEST(HostShift, NoSamplesInTheSegmentMeansNoVerdict) {
  std::mt19937 rng(6);
  HostSeries h = Host("a", 1, 0.1, rng);
  h.points.resize(50);   // stops reporting at ~1500 s
  Symptom s = SlowFrom3000();
  EXPECT_TRUE(ShiftsInSegment({h}, s, s.slow[0], 1, 90).hosts.empty());
}

}  // namespace
}  // namespace mt::tools
