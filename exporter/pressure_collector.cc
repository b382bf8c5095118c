#include "exporter/pressure_collector.h"

#include <map>
#include <string>

#include "exporter/text_util.h"

namespace mt::exporter {

bool PressureCollector::Collect(MetricSink& sink) {
  auto text = fs_.Read("/proc/pressure/io");
  if (!text) return true;  // PSI not available: nothing to report
  // line kind ("some"/"full") -> key ("avg10", "total", ...) -> value
  std::map<std::string, std::map<std::string, double>, std::less<>> rows;
  ForEachLine(*text, [&](std::string_view line) {
    auto f = Fields(line);
    if (f.empty() || (f[0] != "some" && f[0] != "full")) return;
    auto& row = rows[std::string(f[0])];
    for (size_t i = 1; i < f.size(); ++i) {
      size_t eq = f[i].find('=');
      if (eq == std::string_view::npos) continue;
      if (auto v = ParseDouble(f[i].substr(eq + 1))) row[std::string(f[i].substr(0, eq))] = *v;
    }
  });
  auto get = [&](const char* kind, const char* key) -> const double* {
    auto r = rows.find(kind);
    if (r == rows.end()) return nullptr;
    auto v = r->second.find(key);
    return v == r->second.end() ? nullptr : &v->second;
  };
  if (auto v = get("some", "avg10"))
    sink.Gauge("hw_io_pressure_some_pct", "Share of time some task stalled on I/O, 10 s average (%).", {}, *v);
  if (auto v = get("full", "avg10"))
    sink.Gauge("hw_io_pressure_full_pct", "Share of time all tasks stalled on I/O, 10 s average (%).", {}, *v);
  if (auto v = get("some", "avg300"))
    sink.Gauge("hw_io_pressure_some_avg300_pct", "Share of time some task stalled on I/O, 300 s average (%).", {}, *v);
  if (auto v = get("full", "avg300"))
    sink.Gauge("hw_io_pressure_full_avg300_pct", "Share of time all tasks stalled on I/O, 300 s average (%).", {}, *v);
  if (auto v = get("full", "total"))
    sink.Counter("hw_io_pressure_full_total_us", "Total time all tasks stalled on I/O (microseconds).", {}, *v);
  return !rows.empty();
}

}  // namespace mt::exporter
