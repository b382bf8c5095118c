// query_tsdb mode "correlate": at one moment (a time, or a training step mapped to its
// wall time through tb_step), sweep every hw_* / ray_* family of the TSDB and rank
// host × metric by how far each host stands from the other hosts, and from its own
// baseline of the hour before.
#include <algorithm>
#include <cmath>
#include <set>

#include "tools/tsdb/tsdb_modes.h"

namespace mt::tools {
namespace {

bool IsCounter(const std::string& name) {
  static const std::set<std::string> gauges = {"ray_node_mem_total"};   // named *_total, but a gauge
  return name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0 && !gauges.count(name);
}

struct Deviation {
  std::string host, metric;
  double value, others, baseline, cross, self;
};

}  // namespace

ModeResult RunCorrelate(TsdbContext& tsdb, double time, std::optional<long> step) {
  ModeResult r;
  const double t = std::clamp(time, tsdb.data().start, tsdb.data().end);
  r.window = tsdb.Clamp({t - 3900, t + 300});
  std::vector<std::string> names;
  for (const auto& n : tsdb.client().LabelValues("__name__")) {
    std::string s = n.get<std::string>();
    if ((s.rfind("hw_", 0) == 0 || s.rfind("ray_", 0) == 0) && s != "hw_gpu_vram_total_bytes") names.push_back(s);
  }
  const double now_end = std::min(t + 300, tsdb.data().end);
  const double base_end = std::max(t - 300, tsdb.data().start);
  const bool have_baseline = base_end - tsdb.data().start >= 600;
  std::vector<Deviation> devs;
  int swept = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    if (i % 8 == 0) tsdb.Progress("correlate: " + name);
    const std::string e = IsCounter(name) ? "sum by (host) (rate(" + name + "[5m]))" : "avg by (host) (" + name + ")";
    auto now = tsdb.PerHost("avg_over_time((" + e + ")[10m:30s])", now_end);
    if (now.size() < 2) continue;
    ++swept;
    std::map<std::string, double> base;
    if (have_baseline) base = tsdb.PerHost("avg_over_time((" + e + ")[60m:60s])", base_end);
    std::vector<double> vals;
    std::vector<std::string> hosts;
    for (auto& [h, v] : now) vals.push_back(v), hosts.push_back(h);
    auto cross = RobustScores(vals, 1e-6);
    double med = Median(vals);
    for (size_t k = 0; k < vals.size(); ++k) {
      double b = base.count(hosts[k]) ? base[hosts[k]] : vals[k];
      double self = (vals[k] - b) / std::max({std::fabs(b) * 0.05, std::fabs(med) * 0.05, 1e-6});
      // Material deviations only: a robust outlier that also differs by > 10 % (or, for a
      // metric that is zero almost everywhere, by more than a trickle).
      bool material = std::fabs(vals[k] - med) > std::max((IsCounter(name) ? 0.10 : 0.25) * std::fabs(med), IsCounter(name) ? 0.5 : 1e-9);
      if (std::fabs(cross[k]) >= 3.5 && material)
        devs.push_back({hosts[k], IsCounter(name) ? "rate(" + name + "[5m])" : name, vals[k], med, b, cross[k], self});
    }
  }
  std::sort(devs.begin(), devs.end(), [](const Deviation& a, const Deviation& b) {
    double x = std::min(std::fabs(a.cross), 1e6) + std::min(std::fabs(a.self), 1e6);
    double y = std::min(std::fabs(b.cross), 1e6) + std::min(std::fabs(b.self), 1e6);
    return x > y;
  });
  std::set<std::string> hosts_flagged;
  for (const auto& d : devs) hosts_flagged.insert(d.host);
  for (size_t k = 0; k < devs.size() && k < 12; ++k)
    AddOutlier(r.outliers, devs[k].host, "", devs[k].metric, devs[k].value, devs[k].others, std::min(std::fabs(devs[k].cross), 1e6) * (devs[k].cross < 0 ? -1 : 1));
  Json rows = Json::array();
  for (size_t k = 0; k < devs.size() && k < 12; ++k)
    rows.push_back({{"host", devs[k].host}, {"metric", devs[k].metric}, {"value", Round(devs[k].value)},
                    {"other_hosts_median", Round(devs[k].others)}, {"own_baseline", Round(devs[k].baseline)},
                    {"changed_vs_own_baseline", std::fabs(devs[k].self) >= 3}});
  Json ev = {{"time", IsoTime(t)}, {"families_swept", swept}, {"deviations", devs.size()}, {"top", rows}};
  if (step) ev["step"] = *step;
  else if (auto s = tsdb.StepAt(t)) ev["step"] = *s;
  r.findings.push_back({{"rule", "host × metric deviations from the other hosts (robust z ≥ 3.5 and > 10 % for rates, > 25 % for gauges) and from the host's own previous hour"},
                        {"verdict", devs.empty() ? "clean" : std::to_string(hosts_flagged.size()) + " host(s) deviate"},
                        {"evidence", ev}});
  if (devs.empty()) {
    r.verdict = "At " + IsoTime(t) + " no host deviates from the others in any of " + std::to_string(swept) + " metric families.";
  } else {
    std::vector<std::string> order;
    for (const auto& d : devs)
      if (std::find(order.begin(), order.end(), d.host) == order.end()) order.push_back(d.host);
    std::string list;
    for (size_t k = 0; k < order.size() && k < 6; ++k) list += (list.empty() ? "" : ", ") + order[k];
    if (order.size() > 6) list += ", …";
    r.verdict = "At " + IsoTime(t) + ": " + std::to_string(order.size()) + " host(s) deviate (" + list + "); strongest: " +
                devs[0].host + " " + devs[0].metric + " = " + Num(devs[0].value) + " vs " + Num(devs[0].others) + " on the other hosts.";
  }
  return r;
}

}  // namespace mt::tools
