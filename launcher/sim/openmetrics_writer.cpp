#include "launcher/sim/openmetrics_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "launcher/sim/tb_scalars.h"

namespace mt::launch::sim {
using base::Errc;
using base::Status;
namespace {

constexpr double kWindow = 7200;     // Prometheus block range
constexpr double kTbFillEvery = 150;  // the tb plugin's synthetic fill period

struct TbPoint {
  double t;       // timestamp (s, millisecond precision)
  size_t step_i;  // index into timeline steps
  bool fill;
};

std::vector<TbPoint> TbPoints(const Timeline& tl) {
  std::vector<TbPoint> pts;
  for (size_t i = 0; i < tl.steps.size(); ++i) {
    const double t = std::round(StepWallTime(tl.steps[i]) * 1000) / 1000;
    // Idle gap before this step (and, below, after the last one): the plugin fills every 150 s.
    if (!pts.empty()) {
      for (double f = pts.back().t + kTbFillEvery; f < t - 1; f += kTbFillEvery) pts.push_back({f, pts.back().step_i, true});
    }
    pts.push_back({t, i, false});
  }
  if (!pts.empty()) {
    for (double f = pts.back().t + kTbFillEvery; f <= tl.metrics_end; f += kTbFillEvery)
      pts.push_back({f, pts.back().step_i, true});
  }
  return pts;
}

void AppendTime(std::string& out, double t, bool millis) {
  char buf[40];
  if (millis) std::snprintf(buf, sizeof buf, "%.3f", t);
  else std::snprintf(buf, sizeof buf, "%.0f", t);
  out += buf;
}

Status WriteFile(const std::filesystem::path& path, const std::string& data) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Status(Errc::kIo, "cannot create " + path.string());
  const bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size();
  if (std::fclose(f) != 0 || !ok) return Status(Errc::kIo, "cannot write " + path.string());
  return Status::Ok();
}

}  // namespace

void AppendValue(std::string& out, double v) {
  char buf[64];
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15) {
    auto r = std::to_chars(buf, buf + sizeof buf, static_cast<long long>(v));
    out.append(buf, r.ptr);
    return;
  }
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

Status WriteOpenMetricsWindows(const MetricsModel& model, const std::filesystem::path& dir,
                               const std::function<Status(const std::filesystem::path&)>& on_file,
                               OpenMetricsStats* stats) {
  const Scenario& s = model.scenario();
  const Timeline& tl = model.timeline();
  const double dt = s.scrape_interval_s;
  const double g0 = std::ceil(tl.metrics_start / dt) * dt;
  const int64_t kmax = static_cast<int64_t>(std::floor((tl.metrics_end - g0) / dt));
  const std::vector<Series>& series = model.series();
  std::vector<double> counter(series.size());
  std::vector<bool> started(series.size(), false);
  for (size_t i = 0; i < series.size(); ++i) counter[i] = model.CounterStart(series[i]);

  const std::vector<TbPoint> tb = TbPoints(tl);
  // Tag order from the first step's scalars; every step has the same tags.
  std::vector<std::string> tags;
  if (!tl.steps.empty())
    for (const auto& [tag, v] : StepScalars(s, tl.steps.front())) tags.push_back(tag);
  std::vector<std::vector<std::pair<std::string, double>>> step_scalars;
  step_scalars.reserve(tl.steps.size());
  for (const auto& r : tl.steps) step_scalars.push_back(StepScalars(s, r));
  const std::string tb_labels = "{host=\"" + s.hosts[0] + "\",instance=\"" + s.hosts[0] + ":9400\",job=\"node_hw\"} ";

  std::string out;
  out.reserve(64 << 20);
  size_t tb_pos = 0;
  const double first = std::min(g0, tb.empty() ? g0 : tb.front().t);
  const double last = std::max(g0 + static_cast<double>(kmax) * dt, tb.empty() ? g0 : tb.back().t);
  for (double w = std::floor(first / kWindow) * kWindow; w <= last; w += kWindow) {
    out.clear();
    const int64_t k_lo = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((w - g0) / dt)));
    const int64_t k_hi = std::min<int64_t>(kmax, static_cast<int64_t>(std::ceil((w + kWindow - g0) / dt)) - 1);
    size_t samples = 0;
    const char* prev_name = "";
    for (size_t i = 0; i < series.size();) {
      const FamilyInfo& info = Info(series[i].family);
      size_t end = i;
      while (end < series.size() && series[end].family == series[i].family) ++end;
      if (std::string(prev_name) != info.name) {
        out += "# TYPE ";
        // Counter families are declared without the _total suffix their samples carry.
        std::string family = info.name;
        if (info.counter) family.resize(family.size() - 6);
        out += family;
        out += info.counter ? " counter\n" : " gauge\n";
        out += "# HELP " + family + " " + info.help + "\n";
      }
      prev_name = info.name;
      const bool is_up = series[i].family == Family::kUpNodeHw || series[i].family == Family::kUpRay;
      for (size_t j = i; j < end; ++j) {
        const Series& sr = series[j];
        const std::string head = std::string(info.name) + "{" + sr.labels + "} ";
        for (int64_t k = k_lo; k <= k_hi; ++k) {
          const double t = g0 + static_cast<double>(k) * dt;
          if (!model.InJob(t)) continue;
          if (!is_up && !model.Scraped(sr.host, t)) continue;
          double v;
          if (info.counter) {
            if (started[j]) counter[j] += model.CounterIncrease(sr, t, dt, static_cast<uint64_t>(k));
            started[j] = true;
            v = counter[j];
          } else {
            v = model.Gauge(sr, t, static_cast<uint64_t>(k));
          }
          out += head;
          AppendValue(out, v);
          out += ' ';
          AppendTime(out, t, false);
          out += '\n';
          ++samples;
        }
      }
      i = end;
    }
    // tb_* gauges (rank 0's exporter), explicit step wall times.
    size_t tb_end = tb_pos;
    while (tb_end < tb.size() && tb[tb_end].t < w + kWindow) ++tb_end;
    if (tb_end > tb_pos) {
      auto emit_family = [&](const std::string& name, auto&& value_of) {
        out += "# TYPE " + name + " gauge\n";
        for (size_t p = tb_pos; p < tb_end; ++p) {
          out += name;
          out += tb_labels;
          AppendValue(out, value_of(tb[p]));
          out += ' ';
          AppendTime(out, tb[p].t, true);
          out += '\n';
          ++samples;
        }
      };
      for (size_t ti = 0; ti < tags.size(); ++ti)
        emit_family(TbMetricName(tags[ti]), [&](const TbPoint& p) {
          const double v = step_scalars[p.step_i][ti].second;
          return static_cast<double>(static_cast<float>(v));  // TensorBoard stores float32
        });
      emit_family("tb_step", [&](const TbPoint& p) { return static_cast<double>(tl.steps[p.step_i].step); });
      emit_family("tb_metrics_plugin_staleness_fill", [&](const TbPoint& p) { return p.fill ? 1.0 : 0.0; });
      tb_pos = tb_end;
    }
    if (samples == 0) continue;
    out += "# EOF\n";
    char name[64];
    std::snprintf(name, sizeof name, "window-%.0f.om", w);
    const std::filesystem::path path = dir / name;
    if (Status err = WriteFile(path, out); !err.ok()) return err;
    if (stats) {
      stats->files++;
      stats->samples += samples;
      stats->bytes += out.size();
    }
    if (on_file)
      if (Status err = on_file(path); !err.ok()) return err;
  }
  if (stats) stats->series = series.size() + (tb.empty() ? 0 : tags.size() + 2);
  return Status::Ok();
}

}  // namespace mt::launch::sim
