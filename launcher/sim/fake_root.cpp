#include "launcher/sim/fake_root.h"

#include "base/atomic_file.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "launcher/sim/job_writer.h"

namespace mt::launch::sim {
namespace fs = std::filesystem;
using base::Errc;
using base::Status;
namespace {

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.0f", std::floor(v));
  return buf;
}

std::string PciAddress(int gpu) {  // distinct buses, sorted like real MI300/MI355 boards
  char buf[32];
  std::snprintf(buf, sizeof buf, "0000:%02x:00.0", 0x05 + 0x10 * gpu);
  return buf;
}

}  // namespace

FakeRoot::FakeRoot(const MetricsModel& model, fs::path root, int host) : m_(model), root_(std::move(root)), host_(host) {
  for (size_t i = 0; i < m_.series().size(); ++i)
    if (m_.series()[i].host == host_) series_.push_back(i);
  counter_.resize(series_.size());
  for (size_t j = 0; j < series_.size(); ++j) counter_[j] = m_.CounterStart(m_.series()[series_[j]]);
}

std::string FakeRoot::GpuDir(int gpu) const { return "sys/devices/pci0000:00/" + PciAddress(gpu); }

Status FakeRoot::Write(const std::string& rel, const std::string& data) const {
  return base::WriteFileAtomic(root_ / rel, data);
}

Status FakeRoot::Init() {
  std::error_code ec;
  const Scenario& s = m_.scenario();
  for (const char* d : {"proc/net", "proc/pressure", "sys/class/hwmon", "sys/bus/pci/drivers/amdgpu", "sys/class/infiniband",
                        "sys/class/kfd/kfd/proc"}) {
    fs::create_directories(root_ / d, ec);
    if (ec) return Status(Errc::kIo, "cannot create " + (root_ / d).string() + ": " + ec.message());
  }
  for (int g = 0; g < s.gpus_per_node; ++g) {
    const std::string hw = "hwmon" + std::to_string(g + 2);  // hwmon0/1 are CPU sensors on real nodes
    const fs::path dev = root_ / GpuDir(g);
    fs::create_directories(dev / "hwmon" / hw, ec);
    if (!ec) fs::create_directories(dev / "ras", ec);
    if (ec) return Status(Errc::kIo, "cannot create " + dev.string() + ": " + ec.message());
    // Relative links, as the kernel makes them, so they resolve inside the fake root.
    fs::remove(root_ / "sys/class/hwmon" / hw, ec);
    fs::create_symlink("../../devices/pci0000:00/" + PciAddress(g) + "/hwmon/" + hw, root_ / "sys/class/hwmon" / hw, ec);
    if (!ec) {
      fs::remove(dev / "hwmon" / hw / "device", ec);
      fs::create_symlink("../../../" + PciAddress(g), dev / "hwmon" / hw / "device", ec);
    }
    if (!ec) {
      fs::remove(root_ / "sys/bus/pci/drivers/amdgpu" / PciAddress(g), ec);
      fs::create_symlink("../../../../devices/pci0000:00/" + PciAddress(g), root_ / "sys/bus/pci/drivers/amdgpu" / PciAddress(g), ec);
    }
    if (ec) return Status(Errc::kIo, "cannot create GPU symlinks under " + root_.string() + ": " + ec.message());
    if (Status e = Write(GpuDir(g) + "/hwmon/" + hw + "/name", "amdgpu\n"); !e.ok()) return e;
    if (Status e = Write(GpuDir(g) + "/mem_info_vram_total", Num(288.0 * 1024 * 1024 * 1024) + "\n"); !e.ok()) return e;
  }
  for (int n = 0; n < s.nics; ++n) {
    const std::string port = "sys/class/infiniband/ionic_" + std::to_string(n) + "/ports/1";
    fs::create_directories(root_ / port / "hw_counters", ec);
    if (ec) return Status(Errc::kIo, "cannot create " + port);
    if (Status e = Write(port + "/state", "4: ACTIVE\n"); !e.ok()) return e;
  }
  return Status::Ok();
}

Status FakeRoot::Update(double t, double dt, uint64_t k) {
  const Scenario& s = m_.scenario();
  // Current value of every series of this host, by family / unit.
  std::map<std::pair<Family, int>, double> v;  // (family, gpu*4+variant or nic) -> value
  for (size_t j = 0; j < series_.size(); ++j) {
    const Series& sr = m_.series()[series_[j]];
    const FamilyInfo& info = Info(sr.family);
    double value;
    if (info.counter) {
      if (started_) counter_[j] += m_.CounterIncrease(sr, t, dt, k);
      value = counter_[j];
    } else {
      value = m_.Gauge(sr, t, k);
    }
    const int unit = info.scope == Scope::kGpu ? sr.gpu * 4 + sr.variant : info.scope == Scope::kNic ? sr.nic : 0;
    v[{sr.family, unit}] = value;
  }
  started_ = true;
  auto get = [&](Family f, int unit = 0) { return v[{f, unit}]; };

  for (int g = 0; g < s.gpus_per_node; ++g) {
    const std::string hw = GpuDir(g) + "/hwmon/hwmon" + std::to_string(g + 2);
    const int u = g * 4;
    Status e;
    if (e = Write(hw + "/temp2_input", Num(get(Family::kGpuTemp, u) * 1000) + "\n"); !e.ok()) return e;
    if (e = Write(hw + "/power1_input", Num(get(Family::kGpuPower, u) * 1e6) + "\n"); !e.ok()) return e;
    if (e = Write(hw + "/freq1_input", Num(get(Family::kGpuClock, u) * 1e6) + "\n"); !e.ok()) return e;
    if (e = Write(hw + "/freq2_input", Num(get(Family::kGpuClock, u + 1) * 1e6) + "\n"); !e.ok()) return e;
    if (e = Write(GpuDir(g) + "/mem_info_vram_used", Num(get(Family::kGpuVramUsed, u)) + "\n"); !e.ok()) return e;
    auto ras = [&](Family ue, Family ce) {
      return "ue: " + Num(get(ue, u)) + "\nce: " + Num(ce == Family::kCount ? 0 : get(ce, u)) + "\n";
    };
    if (e = Write(GpuDir(g) + "/ras/aca_umc", ras(Family::kGpuRasUmcUe, Family::kGpuRasUmcCe)); !e.ok()) return e;
    if (e = Write(GpuDir(g) + "/ras/aca_xgmi_wafl", ras(Family::kGpuRasXgmiUe, Family::kGpuRasXgmiCe)); !e.ok()) return e;
    if (e = Write(GpuDir(g) + "/ras/aca_gfx", ras(Family::kGpuRasGfxUe, Family::kCount)); !e.ok()) return e;
    if (e = Write(GpuDir(g) + "/aer_dev_correctable",
                  "RxErr 0\nBadTLP 0\nBadDLLP 0\nTimeout 0\nTOTAL_ERR_COR " + Num(get(Family::kGpuPcieCorrectable, u)) + "\n");
        !e.ok())
      return e;
    if (e = Write(GpuDir(g) + "/aer_dev_fatal", "Undefined 0\nDLP 0\nTOTAL_ERR_FATAL " + Num(get(Family::kGpuPcieFatal, u)) + "\n"); !e.ok())
      return e;
    if (e = Write(GpuDir(g) + "/aer_dev_nonfatal", "Undefined 0\nTOTAL_ERR_NONFATAL 0\n"); !e.ok()) return e;
  }
  for (int n = 0; n < s.nics; ++n) {
    const std::string c = "sys/class/infiniband/ionic_" + std::to_string(n) + "/ports/1/hw_counters/";
    const double rx = get(Family::kRdmaRxBytes, n), tx = get(Family::kRdmaTxBytes, n);
    const std::pair<const char*, double> files[] = {
        {"rx_rdma_ucast_bytes", rx}, {"tx_rdma_ucast_bytes", tx}, {"rx_rdma_ucast_pkts", std::floor(rx / 4096)},
        {"tx_rdma_ucast_pkts", std::floor(tx / 4096)}, {"tx_rdma_retx_pkts", get(Family::kRdmaTxRetxPkts, n)},
        {"tx_rdma_retx_bytes", get(Family::kRdmaTxRetxPkts, n) * 4096}, {"tx_rdma_ack_timeout", get(Family::kRdmaTxAckTimeout, n)},
        {"rx_rdma_cnp_pkts", get(Family::kRdmaRxCnpPkts, n)}, {"tx_rdma_cnp_pkts", 0}, {"rx_rdma_ecn_pkts", 0},
        {"req_rx_cqe_err", 0}, {"req_tx_retry_excd_err", get(Family::kRdmaRetryExcd, n)}};
    for (const auto& [name, value] : files)
      if (Status e = Write(c + name, Num(value) + "\n"); !e.ok()) return e;
  }
  const double running = get(Family::kProcsRunning), blocked = get(Family::kProcsBlocked);
  const double ctxt = get(Family::kContextSwitches);
  Status e;
  if (e = Write("proc/stat", "cpu  " + Num(t * 50) + " 0 " + Num(t * 8) + " " + Num(t * 150) + " 0 0 0 0 0 0\n" +
                                 "intr 0\nctxt " + Num(ctxt) + "\nbtime 1767225600\nprocesses " + Num(40000 + 3.0 * static_cast<double>(k)) +
                                 "\nprocs_running " + Num(running) + "\nprocs_blocked " + Num(blocked) + "\nsoftirq 0\n");
      !e.ok())
    return e;
  char load[96];
  std::snprintf(load, sizeof load, "%.2f %.2f %.2f %.0f/2150 %d\n", running * 0.9, running * 0.85, running * 0.8, running,
                40000 + static_cast<int>(k % 10000));
  if (e = Write("proc/loadavg", load); !e.ok()) return e;
  if (e = Write("proc/net/snmp",
                "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n"
                "Tcp: 1 200 120000 -1 5231 4077 12 31 118 " + Num(9e8 + t * 4e3) + " " + Num(8e8 + t * 4e3) + " " +
                    Num(get(Family::kTcpRetrans)) + " 0 1207 0\n");
      !e.ok())
    return e;
  if (e = Write("proc/net/netstat",
                "TcpExt: SyncookiesSent ListenOverflows ListenDrops TCPAbortOnTimeout\n"
                "TcpExt: 0 0 " + Num(get(Family::kTcpListenDrops)) + " " + Num(get(Family::kTcpAbortOnTimeout)) + "\n");
      !e.ok())
    return e;
  if (e = Write("proc/net/dev",
                "Inter-|   Receive                                                |  Transmit\n"
                " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
                "    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0\n"
                "  eth0: " + Num(get(Family::kNetRxBytes)) + " " + Num(get(Family::kNetRxBytes) / 1500) + " " +
                    Num(get(Family::kNetRxErrors)) + " 0 0 0 0 0 " + Num(get(Family::kNetTxBytes)) + " " +
                    Num(get(Family::kNetTxBytes) / 1500) + " " + Num(get(Family::kNetTxErrors)) + " 0 0 0 0 0\n");
      !e.ok())
    return e;
  if (e = Write("proc/vmstat", "nr_free_pages 1000000\noom_kill " + Num(get(Family::kOomKills)) + "\n"); !e.ok()) return e;
  if (e = Write("proc/meminfo", "MemTotal:       3221225472 kB\nDirty:          " + Num(get(Family::kMemDirty) / 1024) +
                                    " kB\nWriteback:      " + Num(get(Family::kMemWriteback) / 1024) + " kB\n");
      !e.ok())
    return e;
  char io[256];
  std::snprintf(io, sizeof io, "some avg10=%.2f avg60=%.2f avg300=%.2f total=%.0f\nfull avg10=%.2f avg60=%.2f avg300=%.2f total=%.0f\n",
                get(Family::kIoSome), get(Family::kIoSome) * 0.6, get(Family::kIoSome) * 0.2, t * 10,
                get(Family::kIoFull), get(Family::kIoFull) * 0.6, get(Family::kIoFull) * 0.2, t * 4);
  if (e = Write("proc/pressure/io", io); !e.ok()) return e;
  // One KFD process entry per process holding the GPUs.
  const fs::path kfd = root_ / "sys/class/kfd/kfd/proc";
  const int want = static_cast<int>(get(Family::kGpuUserProcesses));
  std::error_code ec;
  for (int p = 0; p < 4; ++p) {
    const fs::path d = kfd / std::to_string(4242 + p);
    if (p < want) {
      fs::create_directories(d, ec);
      if (!fs::exists(d / "pasid", ec))
        if (Status e = Write("sys/class/kfd/kfd/proc/" + std::to_string(4242 + p) + "/pasid", std::to_string(32768 + p) + "\n"); !e.ok())
          return e;
    } else {
      fs::remove_all(d, ec);
    }
  }
  return Status::Ok();
}

}  // namespace mt::launch::sim
