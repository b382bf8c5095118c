#include "exporter/kfd_collector.h"

#include <algorithm>
#include <cctype>

namespace mt::exporter {

bool KfdCollector::Collect(MetricSink& sink) {
  const char* dir = "/sys/class/kfd/kfd/proc";
  if (!fs_.IsDir(dir)) return true;  // no ROCm driver
  auto names = fs_.List(dir);
  auto numeric = std::count_if(names.begin(), names.end(), [](const std::string& n) {
    return !n.empty() && std::all_of(n.begin(), n.end(), [](unsigned char c) { return std::isdigit(c); });
  });
  sink.Gauge("hw_gpu_user_processes", "Processes with an open AMD GPU context (/sys/class/kfd/kfd/proc).",
             {}, static_cast<double>(numeric));
  return true;
}

}  // namespace mt::exporter
