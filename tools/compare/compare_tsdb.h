// compare_jobs' TSDB contention sweep: every hw_*, ray_node_* and tb_* metric of two jobs,
// each measured per host over the jobs' overlapping steady step range (mapped to wall
// time through each TSDB's own tb_step), then compared.
//
// Per host: a gauge is the median over the window (spikes do not move it), a counter
// (`*_total`) the upper quartile over the window of its 5-minute per-second rate, sampled
// each minute (a phase of a quarter of the window counts, a burst of a few minutes does
// not; counters count since boot, resets are handled by rate). Two patterns make a difference significant:
//  - uniform: the medians over hosts moved by more than 5 noise units, where the noise
//    is the robust spread of the host values (at least 1 % of the value, or an absolute
//    floor) — or, on common hosts, the median per-host difference by more than 5 robust
//    spreads of those differences (each host its own control), or a sign test over ≥ 16
//    common hosts at z ≥ 4 with a shift of ≥ 10 % — and ≥ 90 % of the common hosts moved
//    the same way by at least half of it (hosts_consistent) — e.g. hw_procs_running 18 → 35 on every host;
//  - hosts: a few hosts stand out both from their own job and from the other job by more
//    than 8 noise units and 10 %, beyond every host of the other job (heterogeneity both
//    jobs share is no difference) — e.g. RDMA retransmits on four hosts of one job.
// The score (effect size in noise units) ranks the metrics: contention metrics (hw_*,
// ray_node_*) first, then training (tb_learning_*) and throughput (tb_perf_*) ones.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "mcp/json.h"
#include "mcp/typed.h"
#include "tools/tsdb/metrics_source.h"
#include "tools/tsdb/tsdb_manager.h"
#include "tools/logs/workspace.h"

namespace mt::mcp {
class CallContext;
}

namespace mt::tools {

struct HostValues {
  std::vector<std::pair<std::string, double>> values;   // by host
};

struct MetricComparison {
  std::string metric;
  std::string kind;                 // contention | training | throughput
  bool counter = false;             // compared as a per-second rate
  double a = 0, b = 0;              // median over hosts
  double delta = 0, delta_pct = 0;  // b - a; percent of |a| (0 when a is 0)
  bool hosts_consistent = false;
  bool significant = false;
  double score = 0;                 // effect size in noise units
  std::string pattern;              // uniform | hosts | none
  double a_mean = 0, b_mean = 0;    // mean over hosts (shows a few hosts' weight)
  std::vector<std::pair<std::string, double>> hosts;   // the hosts that stand out, most first
  std::string hosts_in;             // a | b | both: whose hosts they are
  size_t hosts_a = 0, hosts_b = 0, hosts_common = 0;
};

// Pure comparison of per-host values (what the sweep does for each metric).
MetricComparison CompareHostValues(const std::string& metric, bool counter, const HostValues& a, const HostValues& b);

struct ContentionSide {
  const JobFiles* job = nullptr;
  int64_t first_step = 0, last_step = 0;   // the steady overlapping range
  bool running = false;                    // triage says running or hang
  const MetricsSource* source = nullptr;   // a shared store (mt.yaml metrics.sources) instead of its TSDB
};

// The time window a job's TSDB was read over, and where from.
struct SweepWindow {
  std::string job, start, end;
  std::string source;             // live | private copy | remote
  bool prometheus_started = false;
  template <class F> static void Fields(F& f) {
    f("job", &SweepWindow::job);
    f("start", &SweepWindow::start);
    f("end", &SweepWindow::end);
    f("source", &SweepWindow::source, {.one_of = {"live", "private copy", "remote"}});
    f("prometheus_started", &SweepWindow::prometheus_started, {.description = "this call started Prometheus"});
  }
};

struct ContentionSweepResult {
  std::vector<MetricComparison> metrics;   // ranked
  std::vector<SweepWindow> windows;        // per job
  std::vector<std::string> notes;
  int queries = 0;
};

// Throws TsdbError / PrometheusError (no TSDB, Prometheus cannot start) so that the
// caller can fall back to the logs and say why.
ContentionSweepResult ContentionSweep(const ContentionSide& a, const ContentionSide& b, TsdbManager& manager, mcp::CallContext* call);

}  // namespace mt::tools
