#include "exporter/memory_collector.h"

#include "exporter/text_util.h"

namespace mt::exporter {

namespace {
// "Dirty:   1234 kB" -> bytes.
std::optional<double> MeminfoBytes(std::string_view text, std::string_view key) {
  std::optional<double> out;
  ForEachLine(text, [&](std::string_view line) {
    if (out || line.size() <= key.size() + 1 || line.substr(0, key.size()) != key ||
        line[key.size()] != ':') {
      return;
    }
    auto f = Fields(line.substr(key.size() + 1));
    if (f.empty()) return;
    auto v = ParseU64(f[0]);
    if (!v) return;
    double scale = (f.size() > 1 && f[1] == "kB") ? 1024.0 : 1.0;
    out = static_cast<double>(*v) * scale;
  });
  return out;
}
}  // namespace

bool MemoryCollector::Collect(MetricSink& sink) {
  bool ok = true;
  if (auto meminfo = fs_.Read("/proc/meminfo")) {
    auto dirty = MeminfoBytes(*meminfo, "Dirty");
    auto wb = MeminfoBytes(*meminfo, "Writeback");
    if (dirty) {
      sink.Gauge("hw_mem_dirty_bytes", "Page cache waiting to be written back (/proc/meminfo Dirty).",
                 {}, *dirty);
    }
    if (wb) {
      sink.Gauge("hw_mem_writeback_bytes", "Page cache being written back (/proc/meminfo Writeback).",
                 {}, *wb);
    }
    ok = dirty.has_value() && wb.has_value();
  }
  if (auto vmstat = fs_.Read("/proc/vmstat")) {
    // Kernels before 4.13 have no oom_kill line: the family is then absent, not zero.
    if (auto v = FindKeyU64(*vmstat, "oom_kill")) {
      sink.Counter("hw_oom_kills_total", "OOM killer invocations since boot (/proc/vmstat oom_kill).",
                   {}, static_cast<double>(*v));
    }
  }
  return ok;
}

}  // namespace mt::exporter
