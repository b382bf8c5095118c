#include "exporter/proc_stat_collector.h"

#include "exporter/text_util.h"

namespace mt::exporter {

bool ProcStatCollector::Collect(MetricSink& sink) {
  auto text = fs_.Read("/proc/stat");
  if (!text) return !fs_.Exists("/proc/stat");
  bool any = false;
  if (auto v = FindKeyU64(*text, "procs_running")) {
    sink.Gauge("hw_procs_running", "Tasks in runnable state (/proc/stat procs_running).", {},
               static_cast<double>(*v));
    any = true;
  }
  if (auto v = FindKeyU64(*text, "procs_blocked")) {
    sink.Gauge("hw_procs_blocked", "Tasks blocked on I/O (/proc/stat procs_blocked).", {},
               static_cast<double>(*v));
    any = true;
  }
  if (auto v = FindKeyU64(*text, "ctxt")) {
    sink.Counter("hw_context_switches_total", "Context switches since boot (/proc/stat ctxt).",
                 {}, static_cast<double>(*v));
    any = true;
  }
  return any;
}

}  // namespace mt::exporter
