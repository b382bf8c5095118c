// What the exporter would have scraped from every node while the simulated job ran: the
// hw_* families of reference/maxtext-slurm.md §5.2/§5.3, Ray's GPU utilisation and node
// gauges, and `up`. Values are functions of (series, time) plus, for counters, the value
// at the previous sample, so any run of samples can be produced in time order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "launcher/sim/scenario.h"
#include "launcher/sim/timeline.h"

namespace mt::launch::sim {

enum class Scope { kGpu, kNic, kHost };

enum class Family {
  // per GPU
  kGpuPower, kGpuTemp, kGpuClock, kGpuVramUsed, kGpuVramTotal, kGpuRasUmcUe, kGpuRasUmcCe, kGpuRasXgmiUe,
  kGpuRasXgmiCe, kGpuRasGfxUe, kGpuPcieCorrectable, kGpuPcieFatal, kRayGpuUtil,
  // per RDMA NIC
  kRdmaRxBytes, kRdmaTxBytes, kRdmaTxRetxPkts, kRdmaTxAckTimeout, kRdmaRxCnpPkts, kRdmaRetryExcd, kRdmaPortState,
  // per host
  kProcsRunning, kProcsBlocked, kContextSwitches, kOomKills, kMemDirty, kMemWriteback, kIoSome, kIoFull,
  kTcpRetrans, kTcpAbortOnTimeout, kTcpListenDrops, kGpuUserProcesses, kDmesgGpuErrors, kNetRxBytes, kNetTxBytes,
  kNetRxErrors, kNetTxErrors, kScrapeDuration, kRayCpuUtil, kRayMemUsed, kRayMemTotal, kUpNodeHw, kUpRay,
  kCount
};

struct FamilyInfo {
  Family id;
  const char* name;    // metric name as queried (counters end in _total)
  bool counter;
  Scope scope;
  const char* help;
  int variants;        // series per scope unit (2 for hw_gpu_clock_mhz: sclk and mclk)
};

const FamilyInfo& Info(Family f);

struct Series {
  Family family;
  int host = 0, gpu = 0, nic = 0, variant = 0;
  std::string labels;  // rendered label set, without braces
  uint64_t stream = 0; // noise stream id
};

enum class Activity {
  kAbsent,      // no scrape (exporter not running yet / any more, or node dead)
  kStartup,     // container up, params loading, compiling
  kTraining,
  kCheckpoint,  // the first seconds of the step after a checkpoint save
  kBusyWait,    // spinning in a collective that never completes
  kIdle,        // process gone or stopped, node still scraped
};

class MetricsModel {
 public:
  MetricsModel(const Scenario& s, const Timeline& tl);

  // All series in exposition order: family by family, then host, GPU/NIC, variant.
  const std::vector<Series>& series() const { return series_; }
  Activity ActivityAt(int host, double t) const;

  // Gauge value at time t (sample index k feeds the noise).
  double Gauge(const Series& s, double t, uint64_t k) const;
  // Counter: value at the first sample, and the increase over (t - dt, t].
  double CounterStart(const Series& s) const;
  double CounterIncrease(const Series& s, double t, double dt, uint64_t k) const;

  // Whether host `h` is scraped at time t (up = 1), and whether any sample exists at all.
  bool Scraped(int host, double t) const { return ActivityAt(host, t) != Activity::kAbsent; }
  bool InJob(double t) const { return t >= tl_.metrics_start && t <= tl_.metrics_end; }

  const Scenario& scenario() const { return s_; }
  const Timeline& timeline() const { return tl_; }

 private:
  bool Thermal(int host, int gpu, double t, double* temp) const;
  double RetxRate(int host, int nic, double t) const;
  const Scenario& s_;
  const Timeline& tl_;
  std::vector<Series> series_;
  double leak_ = 0;
  int dead_host_ = -1;
  std::vector<bool> accused_dead_;
};

}  // namespace mt::launch::sim
