// NVIDIA GPUs through `nvidia-smi --query-gpu=... --format=csv,noheader,nounits`, under
// the same hw_gpu_* names as the AMD collector. nvidia-smi takes tens to hundreds of
// milliseconds and can hang when a GPU is in a bad state, so it runs on its own thread
// every interval (killed at the interval) and scrapes serve the latest reading; a reading
// older than three intervals is not served (no "ghost" data).
//
// ECC: the lifetime (aggregate) corrected / uncorrected totals are exported as
// hw_gpu_ras_umc_ce_total / hw_gpu_ras_umc_ue_total, so the memory-error queries of the
// playbooks work on both vendors.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "exporter/collector.h"

namespace mt::exporter {

// The fields queried, in order.
extern const char* const kNvidiaSmiFields;

struct NvidiaGpuReading {
  std::string pci_bus_id;
  std::optional<double> temperature_c, power_w, sm_clock_mhz, mem_clock_mhz, mem_used_mib, mem_total_mib,
      ecc_corrected, ecc_uncorrected;
};

// Parses nvidia-smi's CSV (noheader, nounits). "[N/A]", "N/A", "[Not Supported]" and
// other non-numbers leave that value unset. Sorted by PCI bus id (GPU index order).
// Returns nullopt (and sets *error) when a line does not have the expected column count.
std::optional<std::vector<NvidiaGpuReading>> ParseNvidiaSmiCsv(const std::string& csv, std::string* error);

class NvidiaSmiCollector : public Collector {
 public:
  NvidiaSmiCollector(std::string nvidia_smi, std::chrono::milliseconds interval);
  ~NvidiaSmiCollector() override;
  std::string_view name() const override { return "nvidia"; }
  bool Collect(MetricSink& sink) override;

  // One nvidia-smi run on the calling thread (tests); the thread does the same.
  void PollOnce();
  void Start();

 private:
  void Loop();

  std::string smi_;
  std::chrono::milliseconds interval_;
  std::mutex mu_;
  std::vector<NvidiaGpuReading> latest_;
  std::chrono::steady_clock::time_point latest_at_{};
  bool have_reading_ = false;
  bool last_ok_ = true;
  std::atomic<bool> stop_{false};
  std::mutex wake_mu_;
  std::condition_variable wake_;
  std::thread thread_;
};

// The nvidia-smi to use: `configured` if it contains a '/', else the first match on PATH;
// empty when there is none (no NVIDIA driver on this node).
std::string FindNvidiaSmi(const std::string& configured);

}  // namespace mt::exporter
