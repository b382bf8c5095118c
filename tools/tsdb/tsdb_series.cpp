#include "tools/tsdb/tsdb_series.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace mt::tools {
namespace {

bool ParseSample(const Json& pair, TsdbPoint* out) {
  if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_string()) return false;
  const std::string& s = pair[1].get_ref<const std::string&>();
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(v)) return false;
  out->t = pair[0].get<double>();
  out->v = v;
  return true;
}

}  // namespace

std::string TsdbSeries::label(const std::string& name) const {
  auto it = labels.find(name);
  return it == labels.end() ? std::string() : it->second;
}

std::vector<TsdbSeries> ParseQueryData(const Json& data) {
  std::vector<TsdbSeries> out;
  if (!data.is_object()) throw std::runtime_error("Prometheus answer without data");
  const std::string type = data.value("resultType", "");
  const Json& result = data.contains("result") ? data["result"] : Json();
  if (type == "scalar") {
    TsdbSeries s;
    TsdbPoint p;
    if (ParseSample(result, &p)) s.points.push_back(p);
    out.push_back(std::move(s));
    return out;
  }
  if (type != "vector" && type != "matrix") throw std::runtime_error("unexpected Prometheus resultType '" + type + "'");
  for (const auto& r : result) {
    TsdbSeries s;
    if (r.contains("metric") && r["metric"].is_object())
      for (auto& [k, v] : r["metric"].items())
        if (v.is_string()) s.labels[k] = v.get<std::string>();
    TsdbPoint p;
    if (type == "vector") {
      if (r.contains("value") && ParseSample(r["value"], &p)) s.points.push_back(p);
    } else if (r.contains("values")) {
      s.points.reserve(r["values"].size());
      for (const auto& v : r["values"])
        if (ParseSample(v, &p)) s.points.push_back(p);
    }
    out.push_back(std::move(s));
  }
  return out;
}

SeriesStats Stats(const TsdbSeries& s) {
  SeriesStats st;
  if (s.points.empty()) return st;
  st.n = static_cast<int>(s.points.size());
  st.min = st.max = s.points.front().v;
  st.t_min = st.t_max = s.points.front().t;
  double sum = 0;
  for (const auto& p : s.points) {
    sum += p.v;
    if (p.v < st.min) st.min = p.v, st.t_min = p.t;
    if (p.v > st.max) st.max = p.v, st.t_max = p.t;
  }
  st.mean = sum / st.n;
  st.first = s.points.front().v;
  st.t_first = s.points.front().t;
  st.last = s.points.back().v;
  st.t_last = s.points.back().t;
  return st;
}

std::string SeriesKey(const TsdbSeries& s) {
  std::string out = s.label("__name__");
  std::string inner;
  for (const auto& [k, v] : s.labels) {
    if (k == "__name__" || k == "job" || k == "instance") continue;
    if (!inner.empty()) inner += ',';
    inner += k + "=\"" + v + "\"";
  }
  if (!inner.empty() || out.empty()) out += "{" + inner + "}";
  return out;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  double m = *mid;
  if (v.size() % 2 == 0) m = (m + *std::max_element(v.begin(), mid)) / 2;
  return m;
}

std::vector<double> RobustScores(const std::vector<double>& values, double abs_floor) {
  std::vector<double> out(values.size(), 0);
  if (values.size() < 2) return out;
  double med = Median(values);
  std::vector<double> dev;
  dev.reserve(values.size());
  double biggest = 0;
  for (double v : values) {
    dev.push_back(std::fabs(v - med));
    biggest = std::max(biggest, std::fabs(v));
  }
  double scale = std::max({1.4826 * Median(dev), 0.02 * std::fabs(med), 1e-3 * biggest, abs_floor});
  for (size_t i = 0; i < values.size(); ++i) out[i] = (values[i] - med) / scale;
  return out;
}

double Round(double v, int digits) {
  if (v == 0 || !std::isfinite(v)) return std::isfinite(v) ? 0 : v;
  double mag = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  double r = std::round(v * mag) / mag;
  return r == 0 ? 0 : r;   // no -0
}

double ChooseStep(double window_seconds, double requested, int max_points) {
  double step = requested > 0 ? requested : window_seconds <= 2 * 3600 ? 30 : window_seconds <= 24 * 3600 ? 60 : 300;
  double min_step = std::ceil(window_seconds / max_points);
  return std::max({step, min_step, 1.0});
}

}  // namespace mt::tools
