// Decoys: things on innocent hosts that look like evidence to a method that only asks "who
// deviates from the median". Each was there before the fault (or has nothing to do with its
// timing), so blame needs alignment with the symptom, not deviation alone.
#include <cmath>

#include "launcher/sim/fuzz_random.h"
#include "launcher/sim/fuzz_truth.h"
#include "launcher/sim/scenario_fuzz.h"
#include "launcher/sim/timeline.h"

namespace mt::launch::sim {

void AddDecoys(FuzzRng& r, FuzzJob* j, FuzzTruth* t) {
  const Scenario& s = j->scenario;
  const Timeline tl = BuildTimeline(s);
  // Innocent hosts, never node 0 (its exporter also carries the tb_* scalars).
  std::vector<std::string> innocent;
  for (size_t i = 1; i < s.hosts.size(); ++i)
    if (std::find(t->culprits.begin(), t->culprits.end(), s.hosts[i]) == t->culprits.end()) innocent.push_back(s.hosts[i]);
  if (innocent.empty()) return;
  // Before the fault's onset when there is one, so that the decoy cannot line up with it.
  const double quiet_end = t->onset_time > 0 ? t->onset_time - 300 : tl.metrics_end - 300;
  const int n = static_cast<int>(r.Int(1, 2));
  static const std::vector<std::string> kKinds = {"tcp_noise", "hot_host", "rdma_blip", "missing_series",
                                                  "counter_reset", "scrape_gap", "late_join"};
  for (int i = 0; i < n; ++i) {
    const std::string kind = r.Pick(kKinds);
    const std::string h = r.Pick(innocent);
    FuzzDecoy d{kind, h, ""};
    if (kind == "tcp_noise") {
      const double rate = std::round(r.U(20, 400));
      j->effects.push_back(MakeEffect(Effect::Op::kRate, "hw_tcp_retransmits_total", h, -1e18, 1e18, rate, rate * 0.2));
      d.detail = "TCP retransmits at ~" + std::to_string(static_cast<int>(rate)) + "/s for the whole run";
    } else if (kind == "hot_host") {
      const double add = std::round(r.U(12, 24));
      j->effects.push_back(MakeEffect(Effect::Op::kAdd, "hw_gpu_temperature_celsius", h, -1e18, 1e18, add, 0.5));
      d.detail = "GPUs +" + std::to_string(static_cast<int>(add)) + " °C for the whole run (no throttling)";
    } else if (kind == "rdma_blip") {
      const double a = r.U(tl.metrics_start + 120, std::max(tl.metrics_start + 180, quiet_end - 600));
      Effect e = MakeEffect(Effect::Op::kRate, "hw_rdma_tx_retx_pkts_total", h, a, a + r.U(120, 400), std::round(r.U(100, 1500)), 50);
      e.label_match = "device=\"ionic_0\"";
      j->effects.push_back(e);
      d.detail = "a short RDMA retransmit burst well before any slowdown";
    } else if (kind == "missing_series") {
      static const std::vector<std::string> kPrefixes = {"hw_rdma_*", "ray_node_*", "hw_gpu_temperature_celsius", "hw_tcp_*"};
      d.detail = r.Pick(kPrefixes);
      j->effects.push_back(MakeEffect(Effect::Op::kDrop, d.detail, h, -1e18, 1e18, 0, 0));
    } else if (kind == "counter_reset") {
      static const std::vector<std::string> kCounters = {"hw_context_switches_total", "hw_tcp_retransmits_total",
                                                         "hw_net_rx_bytes_total", "hw_rdma_tx_bytes_total"};
      d.detail = r.Pick(kCounters);
      j->effects.push_back(MakeEffect(Effect::Op::kReset, d.detail, h, r.U(tl.metrics_start + 300, tl.metrics_end - 300), 1e18, 0, 0));
    } else if (kind == "scrape_gap") {
      const double a = r.U(tl.metrics_start + 300, std::max(tl.metrics_start + 400, tl.metrics_end - 900));
      const double len = r.U(120, 480);
      j->effects.push_back(MakeEffect(Effect::Op::kDrop, "*", h, a, a + len, 0, 0));
      d.detail = std::to_string(static_cast<int>(len)) + " s without scrapes";
    } else {
      const double delay = r.U(120, 600);
      j->effects.push_back(MakeEffect(Effect::Op::kDrop, "*", h, -1e18, tl.metrics_start + delay, 0, 0));
      d.detail = "first scraped " + std::to_string(static_cast<int>(delay)) + " s after the others";
    }
    t->decoys.push_back(d);
  }
}

}  // namespace mt::launch::sim
