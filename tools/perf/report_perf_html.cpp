#include "tools/perf/report_perf_html.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "base/workspace_files.h"
#include "tools/common/html_escape.h"
#include "tools/perf/report_trace_html.h"
#include "tools/tsdb/tsdb_context.h"
#include "tools/tsdb/tsdb_series.h"

namespace mt::tools {
namespace {

constexpr double kW = 860, kH = 260, kL = 64, kR = 16, kT = 16, kB = 36;   // chart box and margins

struct Pt {
  double x, y;
};

std::string F(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string Str(const Json& v) {
  if (v.is_null()) return "–";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return Num(v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  return v.dump();
}

// Axis ticks: 5 evenly spaced labelled values.
std::string Axes(double x0, double x1, double y0, double y1, const std::string& xlabel, const std::string& ylabel) {
  std::ostringstream o;
  o << "<line class=\"axis\" x1=\"" << kL << "\" y1=\"" << kH - kB << "\" x2=\"" << kW - kR << "\" y2=\"" << kH - kB << "\"/>";
  o << "<line class=\"axis\" x1=\"" << kL << "\" y1=\"" << kT << "\" x2=\"" << kL << "\" y2=\"" << kH - kB << "\"/>";
  for (int i = 0; i <= 4; ++i) {
    double fx = kL + (kW - kL - kR) * i / 4.0, fy = kH - kB - (kH - kT - kB) * i / 4.0;
    o << "<text class=\"tick\" x=\"" << F(fx) << "\" y=\"" << kH - kB + 14 << "\" text-anchor=\"middle\">" << Num(x0 + (x1 - x0) * i / 4.0) << "</text>";
    o << "<text class=\"tick\" x=\"" << kL - 4 << "\" y=\"" << F(fy + 4) << "\" text-anchor=\"end\">" << Num(y0 + (y1 - y0) * i / 4.0) << "</text>";
    o << "<line class=\"grid\" x1=\"" << kL << "\" y1=\"" << F(fy) << "\" x2=\"" << kW - kR << "\" y2=\"" << F(fy) << "\"/>";
  }
  o << "<text class=\"label\" x=\"" << F((kL + kW - kR) / 2) << "\" y=\"" << kH - 4 << "\" text-anchor=\"middle\">" << HtmlEscape(xlabel) << "</text>";
  o << "<text class=\"label\" x=\"12\" y=\"" << F((kT + kH - kB) / 2) << "\" transform=\"rotate(-90 12 " << F((kT + kH - kB) / 2)
    << ")\" text-anchor=\"middle\">" << HtmlEscape(ylabel) << "</text>";
  return o.str();
}

// A line chart of (step, value) with optional phase bands [(start, end, mean)].
std::string LineChart(const std::string& id, const std::vector<Pt>& pts, const std::string& xlabel, const std::string& ylabel,
                      const Json& phases) {
  std::ostringstream o;
  o << "<svg id=\"" << id << "\" class=\"chart\" viewBox=\"0 0 " << kW << " " << kH << "\" width=\"" << kW << "\" height=\"" << kH
    << "\" role=\"img\" aria-label=\"" << HtmlEscape(ylabel) << "\" data-points=\"" << pts.size() << "\">";
  if (pts.empty()) {
    o << "<text x=\"" << kW / 2 << "\" y=\"" << kH / 2 << "\" text-anchor=\"middle\">no data</text></svg>";
    return o.str();
  }
  double x0 = pts.front().x, x1 = pts.front().x, y0 = pts.front().y, y1 = pts.front().y;
  for (const auto& p : pts) x0 = std::min(x0, p.x), x1 = std::max(x1, p.x), y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
  if (x1 == x0) x1 = x0 + 1;
  double pad = (y1 - y0) * 0.05;
  if (pad == 0) pad = std::max(1e-6, std::fabs(y0) * 0.01);
  y0 -= pad, y1 += pad;
  auto X = [&](double x) { return kL + (x - x0) / (x1 - x0) * (kW - kL - kR); };
  auto Y = [&](double y) { return kH - kB - (y - y0) / (y1 - y0) * (kH - kT - kB); };
  if (phases.is_array()) {
    int i = 0;
    for (const auto& ph : phases) {
      double a = X(ph["start_step"].get<double>()), b = X(ph["end_step"].get<double>());
      o << "<rect class=\"phase p" << (i++ % 2) << "\" x=\"" << F(a) << "\" y=\"" << kT << "\" width=\"" << F(std::max(1.0, b - a))
        << "\" height=\"" << kH - kT - kB << "\"><title>steps " << Str(ph["start_step"]) << "–" << Str(ph["end_step"]) << ": mean "
        << Str(ph["mean"]) << "</title></rect>";
      double m = ph["mean"].get<double>();
      if (m >= y0 && m <= y1)
        o << "<line class=\"phasemean\" x1=\"" << F(a) << "\" y1=\"" << F(Y(m)) << "\" x2=\"" << F(b) << "\" y2=\"" << F(Y(m)) << "\"/>";
    }
  }
  o << Axes(x0, x1, y0, y1, xlabel, ylabel);
  // At most ~2,000 vertices: a long run is drawn from every k-th point (min and max of
  // each bucket, so spikes stay visible).
  size_t bucket = std::max<size_t>(1, pts.size() / 1000);
  o << "<polyline class=\"series\" points=\"";
  for (size_t i = 0; i < pts.size(); i += bucket) {
    size_t e = std::min(pts.size(), i + bucket);
    size_t lo = i, hi = i;
    for (size_t k = i; k < e; ++k) {
      if (pts[k].y < pts[lo].y) lo = k;
      if (pts[k].y > pts[hi].y) hi = k;
    }
    for (size_t k : {std::min(lo, hi), std::max(lo, hi)}) {
      o << F(X(pts[k].x)) << "," << F(Y(pts[k].y)) << " ";
      if (lo == hi) break;
    }
  }
  o << "\"/></svg>";
  return o.str();
}

std::string Histogram(const std::string& id, const std::vector<double>& v, const std::string& xlabel) {
  std::ostringstream o;
  o << "<svg id=\"" << id << "\" class=\"chart\" viewBox=\"0 0 " << kW << " " << kH << "\" width=\"" << kW << "\" height=\"" << kH
    << "\" role=\"img\" aria-label=\"step-time histogram\" data-points=\"" << v.size() << "\">";
  if (v.empty()) {
    o << "<text x=\"" << kW / 2 << "\" y=\"" << kH / 2 << "\" text-anchor=\"middle\">no data</text></svg>";
    return o.str();
  }
  // Bins over p0.5–p99.5 so that one 150 s compile step does not squash the rest; the
  // outliers go to the first and last bins.
  std::vector<double> s = v;
  std::sort(s.begin(), s.end());
  double lo = s[static_cast<size_t>(0.005 * static_cast<double>(s.size() - 1))];
  double hi = s[static_cast<size_t>(0.995 * static_cast<double>(s.size() - 1))];
  if (hi <= lo) hi = lo + std::max(1e-6, std::fabs(lo) * 0.01);
  const int bins = 40;
  std::vector<size_t> count(bins, 0);
  for (double x : v) {
    int b = static_cast<int>((x - lo) / (hi - lo) * bins);
    count[static_cast<size_t>(std::clamp(b, 0, bins - 1))]++;
  }
  size_t cmax = *std::max_element(count.begin(), count.end());
  o << Axes(lo, hi, 0, static_cast<double>(cmax), xlabel, "steps");
  double bw = (kW - kL - kR) / bins;
  for (int b = 0; b < bins; ++b) {
    double h = cmax ? static_cast<double>(count[static_cast<size_t>(b)]) / static_cast<double>(cmax) * (kH - kT - kB) : 0;
    o << "<rect class=\"bar\" x=\"" << F(kL + b * bw + 1) << "\" y=\"" << F(kH - kB - h) << "\" width=\"" << F(bw - 2) << "\" height=\""
      << F(h) << "\"><title>" << Num(lo + (hi - lo) * b / bins) << "–" << Num(lo + (hi - lo) * (b + 1) / bins) << " s: "
      << count[static_cast<size_t>(b)] << "</title></rect>";
  }
  o << "</svg>";
  return o.str();
}

std::string Row(const std::string& k, const std::string& v) {
  return "<tr><th>" + HtmlEscape(k) + "</th><td>" + HtmlEscape(v) + "</td></tr>";
}

}  // namespace

std::string RenderPerfHtml(const Json& p, const LogScan& scan) {
  std::vector<Pt> tgs, loss;
  std::vector<double> secs;
  int warm = p["steps"]["warmup_steps"].get<int>();
  for (size_t i = 0; i < scan.steps.size(); ++i) {
    const auto& s = scan.steps[i];
    if (s.tgs_n) tgs.push_back({static_cast<double>(s.step), s.tgs()});
    if (s.loss >= 0 && !std::isnan(s.loss)) loss.push_back({static_cast<double>(s.step), s.loss});
    if (i >= static_cast<size_t>(warm) && s.seconds > 0) secs.push_back(s.seconds);
  }
  std::string id = Str(p["job"]["id"]);
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
    << "<title>perf " << HtmlEscape(id) << "</title><style>"
    << "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:920px}"
    << "h1{font-size:20px}h2{font-size:16px;margin-top:28px}table{border-collapse:collapse}"
    << "th,td{padding:2px 10px;text-align:left;border-bottom:1px solid #eee}th{font-weight:600;color:#555}"
    << ".chart{display:block;border:1px solid #ddd;background:#fff;max-width:100%;height:auto}"
    << ".axis{stroke:#444}.grid{stroke:#eee}.tick{font-size:10px;fill:#555}.label{font-size:11px;fill:#333}"
    << ".series{fill:none;stroke:#1f77b4;stroke-width:1.2}.bar{fill:#1f77b4}.p0{fill:#f4f7fb}.p1{fill:#fbf6ee}"
    << ".phasemean{stroke:#d62728;stroke-dasharray:4 3}.verdict{background:#f6f6f6;padding:8px 12px}"
    << "</style></head><body>\n";
  o << "<h1>Performance of job " << HtmlEscape(id) << " <small>" << HtmlEscape(Str(p["job"]["name"])) << "</small></h1>\n";
  o << "<p class=\"verdict\">" << HtmlEscape(Str(p["verdict"])) << "</p>\n";
  const Json& st = p["steady"];
  o << "<h2>Steady state</h2><table>" << Row("status", Str(p["status"]) + " (" + Str(p["class"]) + ")")
    << Row("model / nodes", Str(p["job"]["model"]) + " / " + Str(p["job"]["nodes"]))
    << Row("steps", Str(p["steps"]["first"]) + "–" + Str(p["steps"]["last"]) + " (" + Str(p["steps"]["logical"]) + " logical, " +
                        Str(p["steps"]["entries_per_step"]) + " log lines per step)")
    << Row("steady window", Str(st["first_step"]) + "–" + Str(st["last_step"]) + " (first " + Str(p["steps"]["warmup_steps"]) + " steps are warm-up)")
    << Row("TGS (tokens/s/device)", Str(st["tgs"]) + " ± " + Str(st["tgs_std"])) << Row("step time (s)", Str(st["step_seconds"]))
    << Row("TFLOP/s/device", Str(st["tflops_per_device"]))
    << Row("MFU (%)", Str(st["mfu_pct"]) + (p["mfu"]["source"].is_string() ? " (" + Str(p["mfu"]["source"]) + ")" : ""))
    << Row("jitter (TGS CV %)", Str(p["jitter"]["tgs_cv_pct"])) << "</table>\n";
  o << "<h2>Windows</h2><table><tr><th>window</th><th>steps</th><th>mean</th><th>std</th><th>p50</th><th>p99</th><th>min</th><th>max</th></tr>";
  for (const auto& w : p["windows"]) {
    if (!w["tgs"].is_object()) continue;
    o << "<tr><td>" << HtmlEscape(Str(w["name"])) << "</td><td>" << Str(w["first_step"]) << "–" << Str(w["last_step"]) << "</td>";
    for (const char* k : {"mean", "std", "p50", "p99", "min", "max"}) o << "<td>" << Str(w["tgs"][k]) << "</td>";
    o << "</tr>";
  }
  o << "</table>\n";
  o << "<h2>TGS per step, with phases</h2>\n" << LineChart("tgs-chart", tgs, "step", "tokens/s/device", p["phases"]) << "\n";
  o << "<h2>Step-time histogram (after warm-up)</h2>\n" << Histogram("steptime-chart", secs, "seconds per step") << "\n";
  const Json& ov = p["periodic_overhead"];
  o << "<p>Step-time spikes: " << Str(ov["spikes"]) << "; period " << Str(ov["period_steps"]) << " steps; +"
    << Str(ov["extra_seconds_per_spike"]) << " s each; " << Str(ov["overhead_pct"]) << " % of the time; " << Str(ov["at_checkpoints"])
    << " at checkpoint saves.</p>\n";
  o << "<h2>Loss</h2>\n" << LineChart("loss-chart", loss, "step", "loss", Json()) << "\n";
  o << TraceHtmlSection(p["trace"]);
  o << "<h2>Artifacts</h2><table>";
  for (const auto& a : p["artifacts"]["xplane_profiles"]) o << Row("xplane " + Str(a["dir"]), Str(a["xplane_files"]) + " files");
  for (const auto& h : p["artifacts"]["hlo_dumps"]) {
    std::string kinds;
    for (const auto& k : h["by_kind"]) kinds += Str(k["op"]) + " " + Str(k["count"]) + " (" + Str(k["async"]) + " async); ";
    o << Row("HLO " + Str(h["file"]), kinds.empty() ? "no collectives" : kinds);
  }
  for (const auto& e : p["artifacts"]["tensorboard_event_files"]) o << Row("events " + Str(e["file"]), Str(e["records"]) + " records");
  o << "</table>\n";
  if (!p["notes"].empty()) {
    o << "<h2>Notes</h2><ul>";
    for (const auto& n : p["notes"]) o << "<li>" << HtmlEscape(Str(n)) << "</li>";
    o << "</ul>\n";
  }
  o << "<p><small>Generated by mt perf_analysis from " << HtmlEscape(Str(p["job"]["log"])) << ".</small></p>\n</body></html>\n";
  return o.str();
}

std::filesystem::path WritePerfReportHtml(const JobFiles& job, const Json& perf, const LogScan& scan) {
  if (job.dir.empty()) throw std::runtime_error("the job has no directory");
  // Confined to the job directory: a `mt_report` that is a symlink, or a planted link at
  // the temp or final name, cannot redirect the write (base/workspace_files.h).
  auto root = base::FileRoot::Make(job.dir);
  if (!root.ok()) throw std::runtime_error(root.message());
  const std::filesystem::path dir = root->path() / "mt_report";
  base::Status st = base::WriteFileAtomic(*root, dir, "perf.html", RenderPerfHtml(perf, scan));
  if (!st.ok()) throw std::runtime_error("cannot write the report: " + st.message());
  return dir / "perf.html";
}

}  // namespace mt::tools
