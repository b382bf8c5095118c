#include "launcher/sim/metrics_model.h"

#include <algorithm>
#include <cmath>

#include "launcher/sim/noise.h"

namespace mt::launch::sim {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

const FamilyInfo kFamilies[] = {
    {Family::kGpuPower, "hw_gpu_power_watts", false, Scope::kGpu, "GPU power draw in watts (hwmon power1_input).", 1},
    {Family::kGpuTemp, "hw_gpu_temperature_celsius", false, Scope::kGpu, "GPU junction temperature in degrees Celsius.", 1},
    {Family::kGpuClock, "hw_gpu_clock_mhz", false, Scope::kGpu, "GPU clock in MHz (sclk, mclk).", 2},
    {Family::kGpuVramUsed, "hw_gpu_vram_used_bytes", false, Scope::kGpu, "GPU VRAM in use, bytes.", 1},
    {Family::kGpuVramTotal, "hw_gpu_vram_total_bytes", false, Scope::kGpu, "GPU VRAM size, bytes.", 1},
    {Family::kGpuRasUmcUe, "hw_gpu_ras_umc_ue_total", true, Scope::kGpu, "Uncorrectable UMC (memory) RAS errors.", 1},
    {Family::kGpuRasUmcCe, "hw_gpu_ras_umc_ce_total", true, Scope::kGpu, "Correctable UMC (memory) RAS errors.", 1},
    {Family::kGpuRasXgmiUe, "hw_gpu_ras_xgmi_ue_total", true, Scope::kGpu, "Uncorrectable XGMI RAS errors.", 1},
    {Family::kGpuRasXgmiCe, "hw_gpu_ras_xgmi_ce_total", true, Scope::kGpu, "Correctable XGMI RAS errors.", 1},
    {Family::kGpuRasGfxUe, "hw_gpu_ras_gfx_ue_total", true, Scope::kGpu, "Uncorrectable GFX RAS errors.", 1},
    {Family::kGpuPcieCorrectable, "hw_gpu_pcie_correctable_total", true, Scope::kGpu, "PCIe AER correctable errors.", 1},
    {Family::kGpuPcieFatal, "hw_gpu_pcie_fatal_total", true, Scope::kGpu, "PCIe AER fatal errors.", 1},
    {Family::kRayGpuUtil, "ray_node_gpus_utilization", false, Scope::kGpu, "GPU utilization percent reported by Ray.", 1},
    {Family::kRdmaRxBytes, "hw_rdma_rx_bytes_total", true, Scope::kNic, "RDMA bytes received.", 1},
    {Family::kRdmaTxBytes, "hw_rdma_tx_bytes_total", true, Scope::kNic, "RDMA bytes transmitted.", 1},
    {Family::kRdmaTxRetxPkts, "hw_rdma_tx_retx_pkts_total", true, Scope::kNic, "RDMA packets retransmitted.", 1},
    {Family::kRdmaTxAckTimeout, "hw_rdma_tx_ack_timeout_total", true, Scope::kNic, "RDMA ACK timeouts.", 1},
    {Family::kRdmaRxCnpPkts, "hw_rdma_rx_cnp_pkts_total", true, Scope::kNic, "RDMA congestion notification packets received.", 1},
    {Family::kRdmaRetryExcd, "hw_rdma_req_tx_retry_excd_err_total", true, Scope::kNic, "RDMA requests that exhausted their retries.", 1},
    {Family::kRdmaPortState, "hw_rdma_port_state", false, Scope::kNic, "1 if the RDMA port is ACTIVE, else 0.", 1},
    {Family::kProcsRunning, "hw_procs_running", false, Scope::kHost, "Runnable tasks (/proc/stat procs_running).", 1},
    {Family::kProcsBlocked, "hw_procs_blocked", false, Scope::kHost, "Tasks blocked on I/O (/proc/stat procs_blocked).", 1},
    {Family::kContextSwitches, "hw_context_switches_total", true, Scope::kHost, "Context switches (/proc/stat ctxt).", 1},
    {Family::kOomKills, "hw_oom_kills_total", true, Scope::kHost, "OOM killer invocations (/proc/vmstat oom_kill).", 1},
    {Family::kMemDirty, "hw_mem_dirty_bytes", false, Scope::kHost, "Dirty page cache bytes (/proc/meminfo).", 1},
    {Family::kMemWriteback, "hw_mem_writeback_bytes", false, Scope::kHost, "Page cache under writeback (/proc/meminfo).", 1},
    {Family::kIoSome, "hw_io_pressure_some_pct", false, Scope::kHost, "I/O pressure, some, avg10 (%).", 1},
    {Family::kIoFull, "hw_io_pressure_full_pct", false, Scope::kHost, "I/O pressure, full, avg10 (%).", 1},
    {Family::kTcpRetrans, "hw_tcp_retransmits_total", true, Scope::kHost, "TCP segments retransmitted.", 1},
    {Family::kTcpAbortOnTimeout, "hw_tcp_abort_on_timeout_total", true, Scope::kHost, "TCP connections aborted on timeout.", 1},
    {Family::kTcpListenDrops, "hw_tcp_listen_drops_total", true, Scope::kHost, "TCP listen queue drops.", 1},
    {Family::kGpuUserProcesses, "hw_gpu_user_processes", false, Scope::kHost, "Processes holding a KFD context.", 1},
    {Family::kDmesgGpuErrors, "hw_dmesg_gpu_errors_total", true, Scope::kHost, "GPU error records in the kernel ring buffer.", 1},
    {Family::kNetRxBytes, "hw_net_rx_bytes_total", true, Scope::kHost, "Bytes received (/proc/net/dev).", 1},
    {Family::kNetTxBytes, "hw_net_tx_bytes_total", true, Scope::kHost, "Bytes transmitted (/proc/net/dev).", 1},
    {Family::kNetRxErrors, "hw_net_rx_errors_total", true, Scope::kHost, "Receive errors (/proc/net/dev).", 1},
    {Family::kNetTxErrors, "hw_net_tx_errors_total", true, Scope::kHost, "Transmit errors (/proc/net/dev).", 1},
    {Family::kScrapeDuration, "hw_scrape_duration_seconds", false, Scope::kHost, "Time the exporter spent collecting.", 1},
    {Family::kRayCpuUtil, "ray_node_cpu_utilization", false, Scope::kHost, "Node CPU utilization percent reported by Ray.", 1},
    {Family::kRayMemUsed, "ray_node_mem_used", false, Scope::kHost, "Node memory in use, bytes, reported by Ray.", 1},
    {Family::kRayMemTotal, "ray_node_mem_total", false, Scope::kHost, "Node memory size, bytes, reported by Ray.", 1},
    {Family::kUpNodeHw, "up", false, Scope::kHost, "1 if the target was scraped successfully.", 1},
    {Family::kUpRay, "up", false, Scope::kHost, "1 if the target was scraped successfully.", 1},
};
static_assert(sizeof(kFamilies) / sizeof(kFamilies[0]) == static_cast<size_t>(Family::kCount));

bool IsRay(Family f) { return f == Family::kRayGpuUtil || f == Family::kRayCpuUtil || f == Family::kRayMemUsed ||
                              f == Family::kRayMemTotal || f == Family::kUpRay; }

}  // namespace

const FamilyInfo& Info(Family f) { return kFamilies[static_cast<size_t>(f)]; }

MetricsModel::MetricsModel(const Scenario& s, const Timeline& tl) : s_(s), tl_(tl) {
  if (const Fault* f = s.Find(FaultKind::kThreadLeak)) leak_ = f->extra_procs;
  if (const Fault* f = s.Find(FaultKind::kNodeFail)) {
    for (size_t i = 0; i < s.hosts.size(); ++i)
      if (s.hosts[i] == f->hosts[0]) dead_host_ = static_cast<int>(i);
  }
  accused_dead_.assign(s.hosts.size(), false);
  if (const Fault* f = s.Find(FaultKind::kHeartbeat); f && f->real_death)
    for (int t : f->tasks) accused_dead_[static_cast<size_t>(t)] = true;

  const int hosts = static_cast<int>(s.hosts.size());
  for (size_t fi = 0; fi < static_cast<size_t>(Family::kCount); ++fi) {
    const FamilyInfo& info = kFamilies[fi];
    const int units = info.scope == Scope::kGpu ? s.gpus_per_node : info.scope == Scope::kNic ? s.nics : 1;
    for (int h = 0; h < hosts; ++h) {
      const std::string& host = s.hosts[h];
      const std::string instance = host + (IsRay(info.id) ? ":55080" : ":9400");
      const std::string job = IsRay(info.id) ? "ray" : "node_hw";
      for (int u = 0; u < units; ++u) {
        for (int v = 0; v < info.variants; ++v) {
          Series sr;
          sr.family = info.id;
          sr.host = h;
          std::string l;
          if (info.scope == Scope::kNic) {
            sr.nic = u;
            l = "device=\"ionic_" + std::to_string(u) + "\",";
          }
          if (info.scope == Scope::kGpu) {
            sr.gpu = u;
            l = "gpu=\"" + std::to_string(u) + "\",";
          }
          if (info.id == Family::kNetRxBytes || info.id == Family::kNetTxBytes || info.id == Family::kNetRxErrors ||
              info.id == Family::kNetTxErrors)
            l = "device=\"eth0\",";
          l += "host=\"" + host + "\",instance=\"" + instance + "\",job=\"" + job + "\"";
          if (info.scope == Scope::kNic) l += ",port=\"1\"";
          if (info.id == Family::kGpuClock) l += v == 0 ? ",type=\"sclk\"" : ",type=\"mclk\"";
          sr.variant = v;
          sr.labels = l;
          sr.stream = HashString(std::string(info.name) + "{" + l + "}");
          series_.push_back(std::move(sr));
        }
      }
    }
  }
}

Activity MetricsModel::ActivityAt(int host, double t) const {
  if (!InJob(t)) return Activity::kAbsent;
  if (host == dead_host_ && tl_.node_death >= 0 && t >= tl_.node_death) return Activity::kAbsent;
  if (accused_dead_[static_cast<size_t>(host)] && tl_.heartbeat_stop >= 0 && t >= tl_.heartbeat_stop)
    return Activity::kIdle;
  if (tl_.busy_wait_start >= 0 && t >= tl_.busy_wait_start) {
    if (tl_.crash_time >= 0 && t >= tl_.crash_time) return Activity::kIdle;
    return Activity::kBusyWait;
  }
  if (tl_.steps.empty() || t < tl_.steps.front().start) {
    if (tl_.crash_time >= 0 && t >= tl_.crash_time) return Activity::kIdle;
    return Activity::kStartup;
  }
  if (t > tl_.steps.back().end) return Activity::kIdle;
  const int64_t i = tl_.StepIndexAt(t);
  if (i > 0 && tl_.steps[static_cast<size_t>(i - 1)].checkpoint_after &&
      t < tl_.steps[static_cast<size_t>(i)].start + s_.checkpoint_save_s)
    return Activity::kCheckpoint;
  return Activity::kTraining;
}

bool MetricsModel::Thermal(int host, int gpu, double t, double* temp) const {
  for (const auto& f : s_.faults) {
    if (f.kind != FaultKind::kThermal) continue;
    bool on_host = false;
    for (const auto& h : f.hosts) on_host = on_host || h == s_.hosts[static_cast<size_t>(host)];
    bool on_gpu = f.gpus.empty();
    for (int g : f.gpus) on_gpu = on_gpu || g == gpu;
    if (!on_host || !on_gpu) continue;
    const double a = tl_.StepStart(f.step);
    const double b = f.end_step >= 0 ? tl_.StepEnd(f.end_step) : tl_.metrics_end;
    if (a >= 0 && t >= a && (b < 0 || t <= b)) {
      *temp = f.temperature_c;
      return true;
    }
  }
  return false;
}

double MetricsModel::RetxRate(int host, int nic, double t) const {
  double rate = 0;
  for (const auto& f : s_.faults) {
    if (f.kind != FaultKind::kRdmaRetransmits) continue;
    bool on_host = false;
    for (const auto& h : f.hosts) on_host = on_host || h == s_.hosts[static_cast<size_t>(host)];
    if (!on_host) continue;
    // Two NICs of the host misbehave; which two is fixed by the seed.
    const int bad = static_cast<int>(Mix64(s_.seed + static_cast<uint64_t>(host)) % std::max(1, s_.nics));
    if (nic != bad && nic != (bad + 3) % std::max(1, s_.nics)) continue;
    const double a = tl_.StepStart(f.step);
    const double b = f.end_step >= 0 ? tl_.StepEnd(f.end_step) : tl_.metrics_end;
    if (a >= 0 && t >= a && (b < 0 || t <= b)) rate += f.retx_per_s;
  }
  return rate;
}

double MetricsModel::Gauge(const Series& sr, double t, uint64_t k) const {
  const Activity act = ActivityAt(sr.host, t);
  const uint64_t seed = s_.seed;
  const double u = Symmetric(seed, sr.stream, k);   // per-sample noise in [-1, 1)
  const double bias = Symmetric(seed, sr.stream, 0xFFFFFFFFull);  // per-series offset
  double temp = 0;
  const bool hot = sr.family == Family::kGpuTemp || sr.family == Family::kGpuPower || sr.family == Family::kGpuClock
                       ? Thermal(sr.host, sr.gpu, t, &temp)
                       : false;
  switch (sr.family) {
    case Family::kGpuPower:
      switch (act) {
        case Activity::kTraining: return std::round((s_.power_active_w + 6 * bias + 12 * u - (hot ? 170 : 0)) * 10) / 10;
        case Activity::kCheckpoint: return std::round((s_.power_active_w * 0.58 + 20 * u) * 10) / 10;
        case Activity::kBusyWait: return std::round((s_.power_busywait_w + 3 * bias + 6 * u) * 10) / 10;
        case Activity::kStartup: return std::round((s_.power_idle_w + 70 + 30 * u) * 10) / 10;
        default: return std::round((s_.power_idle_w + 4 * u) * 10) / 10;
      }
    case Family::kGpuTemp:
      if (hot && act == Activity::kTraining) return std::round((temp + 1.5 * u) * 10) / 10;
      switch (act) {
        case Activity::kTraining: case Activity::kCheckpoint: return std::round((72 + 3 * bias + 2 * u) * 10) / 10;
        case Activity::kBusyWait: return std::round((55 + 2 * bias + 1 * u) * 10) / 10;
        case Activity::kStartup: return std::round((48 + 2 * u) * 10) / 10;
        default: return std::round((42 + 1 * u) * 10) / 10;
      }
    case Family::kGpuClock:
      if (sr.variant == 1) return 2000;  // mclk (HBM) does not move
      if (hot && act == Activity::kTraining) return std::round(1450 + 60 * u);
      return act == Activity::kTraining || act == Activity::kBusyWait || act == Activity::kCheckpoint
                 ? std::round(2400 - 15 * std::fabs(u))
                 : std::round(500 + 100 * std::fabs(u));
    case Family::kGpuVramUsed:
      if (act == Activity::kIdle && t > tl_.train_end - 4) return 0.3 * kGiB;
      return t >= tl_.memstats ? std::floor(0.93 * 288 * kGiB) : std::floor((0.3 + 0.1 * std::fabs(u)) * kGiB);
    case Family::kGpuVramTotal:
      return 288 * kGiB;
    case Family::kRayGpuUtil:
      switch (act) {
        case Activity::kTraining: case Activity::kBusyWait: return u > 0.9 ? 99 : 100;
        case Activity::kCheckpoint: return std::round(45 + 10 * u);
        case Activity::kStartup: return t >= tl_.restore_end ? 100 : std::round(3 + 3 * std::fabs(u));
        default: return 0;
      }
    case Family::kRdmaPortState:
      return 1;
    case Family::kProcsRunning: {
      switch (act) {
        case Activity::kTraining: case Activity::kCheckpoint: case Activity::kBusyWait: {
          // Small integers jittering around the mean, plus the leaked threads.
          const double v = s_.procs_running + leak_ + 2.0 * u + 0.6 * bias;
          return std::max(1.0, std::round(v));
        }
        case Activity::kStartup: return std::max(1.0, std::round(6 + 3 * u + (t >= tl_.restore_end ? leak_ : 0)));
        default: return std::max(1.0, std::round(2 + std::fabs(u)));
      }
    }
    case Family::kProcsBlocked:
      return act == Activity::kCheckpoint ? std::round(3 + 2 * std::fabs(u)) : (u > 0.8 ? 1 : 0);
    case Family::kMemDirty:
      return std::floor((act == Activity::kCheckpoint ? 2.1e9 : 6e7) * (1 + 0.3 * u));
    case Family::kMemWriteback:
      return act == Activity::kCheckpoint ? std::floor(4e8 * (1 + 0.3 * u)) : std::floor(1e5 * (1 + u));
    case Family::kIoSome:
      return act == Activity::kCheckpoint ? std::round((14 + 4 * u) * 100) / 100 : std::round(std::fabs(0.12 * u) * 100) / 100;
    case Family::kIoFull:
      return act == Activity::kCheckpoint ? std::round((7 + 3 * u) * 100) / 100 : 0;
    case Family::kGpuUserProcesses:
      return act == Activity::kTraining || act == Activity::kCheckpoint || act == Activity::kBusyWait ||
                     (act == Activity::kStartup && t >= tl_.memstats)
                 ? 1
                 : 0;
    case Family::kScrapeDuration:
      return std::round((0.42 + 0.08 * u) * 1000) / 1000;
    case Family::kRayCpuUtil:
      return act == Activity::kTraining || act == Activity::kBusyWait ? std::round((12 + leak_ * 0.4 + 2 * u) * 10) / 10
                                                                      : std::round((3 + u) * 10) / 10;
    case Family::kRayMemUsed:
      return std::floor((act == Activity::kIdle ? 60.0 : t >= tl_.memstats ? 410.0 : 120.0) * kGiB * (1 + 0.01 * u));
    case Family::kRayMemTotal:
      return 3072.0 * kGiB;
    case Family::kUpNodeHw:
    case Family::kUpRay:
      return act == Activity::kAbsent ? 0 : 1;
    default:
      return 0;
  }
}

double MetricsModel::CounterStart(const Series& sr) const {
  // Counters count since boot, so they start at an arbitrary, per-series value.
  const double u = Uniform(s_.seed, sr.stream, 0xABCDEFull);
  switch (sr.family) {
    case Family::kRdmaRxBytes: case Family::kRdmaTxBytes: return std::floor(1e14 * (1 + u));
    case Family::kContextSwitches: return std::floor(5e10 * (1 + u));
    case Family::kTcpRetrans: return std::floor(2e5 * (1 + u));
    case Family::kNetRxBytes: case Family::kNetTxBytes: return std::floor(4e12 * (1 + u));
    case Family::kGpuRasUmcCe: return std::floor(3 * u);
    case Family::kGpuPcieCorrectable: return std::floor(2 * u);
    case Family::kRdmaRxCnpPkts: return std::floor(1e4 * u);
    case Family::kTcpListenDrops: return std::floor(10 * u);
    default: return 0;
  }
}

double MetricsModel::CounterIncrease(const Series& sr, double t, double dt, uint64_t k) const {
  const Activity act = ActivityAt(sr.host, t);
  const bool busy = act == Activity::kTraining || act == Activity::kCheckpoint;
  const double u = Uniform(s_.seed, sr.stream, k);
  switch (sr.family) {
    case Family::kRdmaRxBytes: case Family::kRdmaTxBytes:
      return std::floor((busy ? 1.1e10 : act == Activity::kBusyWait ? 2e6 : 1e4) * dt * (0.9 + 0.2 * u));
    case Family::kRdmaTxRetxPkts: {
      const double r = RetxRate(sr.host, sr.nic, t);
      return r > 0 ? std::floor(r * dt * (0.8 + 0.4 * u)) : 0;
    }
    case Family::kRdmaTxAckTimeout: {
      const double r = RetxRate(sr.host, sr.nic, t);
      return r > 0 ? std::floor(r * 0.004 * dt * (0.5 + u)) : 0;
    }
    case Family::kRdmaRxCnpPkts:
      return busy ? std::floor(2.0 * dt * u) : 0;
    case Family::kContextSwitches:
      return std::floor((busy || act == Activity::kBusyWait ? 2.4e5 + 9e3 * leak_ : 3e4) * dt * (0.95 + 0.1 * u));
    case Family::kTcpRetrans:
      return u > 0.7 ? std::floor(0.2 * dt * u) : 0;  // near zero: RCCL traffic is RDMA, not TCP
    case Family::kNetRxBytes: case Family::kNetTxBytes:
      return std::floor((busy ? 2.5e6 : 4e5) * dt * (0.8 + 0.4 * u));
    case Family::kGpuRasUmcUe:
      // node_fail: the failing node logs an uncorrectable memory error on one GPU shortly before it dies.
      if (sr.host == dead_host_ && sr.gpu == 3 && tl_.node_death >= 0 && t >= tl_.node_death - 60 &&
          t - dt < tl_.node_death - 60)
        return 1;
      return 0;
    case Family::kDmesgGpuErrors:
      if (sr.host == dead_host_ && tl_.node_death >= 0 && t >= tl_.node_death - 60 && t - dt < tl_.node_death - 60)
        return 3;
      return 0;
    default:
      return 0;
  }
}

}  // namespace mt::launch::sim
