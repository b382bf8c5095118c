#include "exporter/collectors.h"

#include <algorithm>
#include <chrono>

#include "exporter/amdgpu_collector.h"
#include "exporter/kfd_collector.h"
#include "exporter/kmsg_collector.h"
#include "exporter/memory_collector.h"
#include "exporter/netdev_collector.h"
#include "exporter/nvidia_smi_collector.h"
#include "exporter/log.h"
#include "exporter/pressure_collector.h"
#include "exporter/proc_stat_collector.h"
#include "exporter/rdma_collector.h"
#include "exporter/tcp_collector.h"
#include "exporter/training_collector.h"

namespace mt::exporter {

std::vector<std::unique_ptr<Collector>> BuildCollectors(const Options& options, const RootFs& fs) {
  std::vector<std::unique_ptr<Collector>> all;
  all.push_back(std::make_unique<AmdGpuCollector>(fs));
  all.push_back(std::make_unique<ProcStatCollector>(fs));
  all.push_back(std::make_unique<MemoryCollector>(fs));
  all.push_back(std::make_unique<PressureCollector>(fs));
  all.push_back(std::make_unique<NetDevCollector>(fs));
  all.push_back(std::make_unique<TcpCollector>(fs));
  all.push_back(std::make_unique<RdmaCollector>(fs));
  all.push_back(std::make_unique<KmsgCollector>(fs));
  all.push_back(std::make_unique<KfdCollector>(fs));
  if (options.nvidia != "off") {
    // No nvidia-smi means no NVIDIA driver on this node: the collector stays off quietly
    // unless it was asked for explicitly.
    std::string smi = FindNvidiaSmi(options.nvidia_smi);
    if (!smi.empty()) {
      auto nv = std::make_unique<NvidiaSmiCollector>(
          smi, std::chrono::milliseconds(static_cast<long long>(options.interval_seconds * 1000)));
      nv->Start();
      all.push_back(std::move(nv));
    } else if (options.nvidia == "smi") {
      Log("nvidia: --nvidia smi but no executable nvidia-smi at '" + options.nvidia_smi + "'");
    }
  }
  if (!options.tfevents.empty() || !options.job_dir.empty() || !options.job_log.empty()) {
    TrainingOptions t;
    t.tfevents = options.tfevents;
    t.job_dir = options.job_dir;
    t.job_log = options.job_log;
    t.host = options.host;
    t.since_epoch = options.tfevents_since.value_or(
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
    all.push_back(std::make_unique<TrainingCollector>(std::move(t)));
  }
  std::erase_if(all, [&](const std::unique_ptr<Collector>& c) {
    return std::find(options.disabled_collectors.begin(), options.disabled_collectors.end(), c->name()) !=
           options.disabled_collectors.end();
  });
  return all;
}

}  // namespace mt::exporter
