// Pairs for compare_jobs: B is A rerun (new job id, new noise, later start) with or
// without a difference the TSDB shows. Kinds:
//   noise_twins   same config, same hosts, nothing changed               → no difference
//   node_count    same config on a different number of other hosts       → no difference
//   uniform_leak  B leaks runnable threads on every host from its first step (no restore)
//   restore_leak  B restores from A's checkpoint and leaks threads from the restore on
//   rdma_hosts    B has RDMA retransmits on k hosts for the whole run
#include <cmath>

#include "launcher/sim/fuzz_random.h"
#include "launcher/sim/fuzz_truth.h"
#include "launcher/sim/scenario_fuzz.h"

namespace mt::launch::sim {

Scenario FuzzBaseScenario(FuzzRng& r, uint64_t seed, int nhosts, FuzzTruth* t);

void MakePair(FuzzRng& r, uint64_t seed, FuzzCase* c, FuzzTruth* t) {
  static const std::vector<std::string> kKinds = {"noise_twins", "noise_twins", "node_count", "uniform_leak", "restore_leak",
                                                  "rdma_hosts"};
  t->kind = "pair";
  t->pair = r.Pick(kKinds);
  const int n = static_cast<int>(r.Pick(std::vector<int64_t>{4, 6, 8, 12, 16, 24, 32}));
  FuzzJob a, b;
  a.scenario = FuzzBaseScenario(r, seed, n, t);
  a.scenario.running = false;
  a.scenario.stop_step = -1;
  if (t->pair == "restore_leak" && a.scenario.checkpoint_period == 0) a.scenario.checkpoint_period = 50;
  b.scenario = a.scenario;
  b.scenario.job_id = std::to_string(std::stoll(a.scenario.job_id) + r.Int(1, 5000));
  b.scenario.seed = a.scenario.seed + 1 + static_cast<uint64_t>(r.Int(1, 1000));
  b.scenario.start = a.scenario.start + std::floor(r.U(3600, 5 * 86400));
  t->family = "none";
  if (t->pair == "node_count") {
    FuzzTruth ignore;
    int m = n;
    while (m == n) m = static_cast<int>(r.Pick(std::vector<int64_t>{4, 6, 8, 12, 16, 24, 32}));
    FuzzHostNames(r, m, &b.scenario.hosts);
    t->magnitude["hosts_b"] = m;
  } else if (t->pair == "uniform_leak" || t->pair == "restore_leak") {
    Fault f;
    f.kind = FaultKind::kThreadLeak;
    f.extra_procs = static_cast<int>(r.Int(6, 30));
    f.tgs_factor = r.U(0.97, 0.995);
    f.extra_init_waves = t->pair == "restore_leak" ? 2 : 0;
    b.scenario.faults.push_back(f);
    if (t->pair == "restore_leak") {
      const int64_t p = a.scenario.checkpoint_period;
      b.scenario.first_step = p * r.Int(1, std::max<int64_t>(1, a.scenario.steps / (2 * p))) + 1;
      b.scenario.single_replica_restore = true;
      b.scenario.passthrough.push_back("enable_single_replica_ckpt_restoring=true");
    }
    t->family = "cpu_contention";
    t->uniform = true;
    t->different = true;
    t->magnitude["extra_procs"] = f.extra_procs;
    t->magnitude["tgs_factor"] = f.tgs_factor;
  } else if (t->pair == "rdma_hosts") {
    Fault f;
    f.kind = FaultKind::kRdmaRetransmits;
    f.step = 0;
    const int k = static_cast<int>(r.Int(1, std::max(1, n / 4)));
    for (int i : r.Distinct(k, 0, n)) f.hosts.push_back(b.scenario.hosts[static_cast<size_t>(i)]);
    f.tgs_factor = r.U(0.75, 0.95);
    f.retx_per_s = std::round(r.U(150, 5000));
    b.scenario.faults.push_back(f);
    t->family = "rdma";
    t->culprits = f.hosts;
    t->different = true;
    t->magnitude["retx_per_s"] = f.retx_per_s;
    t->magnitude["tgs_factor"] = f.tgs_factor;
  }
  t->jobs = {a.scenario.job_id, b.scenario.job_id};
  c->jobs.push_back(std::move(a));
  c->jobs.push_back(std::move(b));
}

}  // namespace mt::launch::sim
