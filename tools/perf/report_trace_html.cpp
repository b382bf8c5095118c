#include "tools/perf/report_trace_html.h"

#include <cstdio>
#include <sstream>

#include "tools/common/html_escape.h"

namespace mt::tools {
namespace {

std::string F(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

double D(const Json& v) { return v.is_number() ? v.get<double>() : 0; }

std::string S(const Json& v) {
  if (v.is_null()) return "–";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) {
    char b[32];
    std::snprintf(b, sizeof b, "%.6g", v.get<double>());
    return b;
  }
  return v.dump();
}

struct Part {
  const char* key;
  const char* label;
  const char* color;
};
constexpr Part kParts[] = {{"compute_pct", "compute", "#1f77b4"},
                           {"exposed_comm_pct", "exposed communication", "#ff7f0e"},
                           {"memcpy_pct", "un-overlapped copies", "#9467bd"},
                           {"idle_pct", "idle", "#c7c7c7"}};

// One bar per rank, 100 % wide; the rest (overlapped communication counts as compute time)
// stays blank.
std::string RankBars(const Json& ranks) {
  constexpr double kW = 860, kLeft = 150, kRight = 20, kBarH = 16, kGap = 6, kTop = 28;
  const double h = kTop + static_cast<double>(ranks.size()) * (kBarH + kGap) + 10;
  std::ostringstream o;
  o << "<svg id=\"trace-ranks-chart\" class=\"chart\" viewBox=\"0 0 " << kW << " " << F(h) << "\" width=\"" << kW << "\" height=\"" << F(h)
    << "\" role=\"img\" aria-label=\"step time per rank\">";
  double lx = kLeft;
  for (const Part& p : kParts) {
    o << "<rect x=\"" << F(lx) << "\" y=\"6\" width=\"10\" height=\"10\" fill=\"" << p.color << "\"/><text class=\"tick\" x=\"" << F(lx + 14)
      << "\" y=\"15\">" << p.label << "</text>";
    lx += 180;
  }
  double y = kTop;
  for (const Json& r : ranks) {
    o << "<text class=\"tick\" x=\"" << F(kLeft - 6) << "\" y=\"" << F(y + 12) << "\" text-anchor=\"end\">rank " << HtmlEscape(S(r["rank"])) << " · "
      << HtmlEscape(S(r["step_ms"])) << " ms</text>";
    double x = kLeft;
    for (const Part& p : kParts) {
      double w = (kW - kLeft - kRight) * D(r[p.key]) / 100;
      if (w <= 0) continue;
      o << "<rect class=\"seg\" data-part=\"" << p.key << "\" x=\"" << F(x) << "\" y=\"" << F(y) << "\" width=\"" << F(w) << "\" height=\""
        << kBarH << "\" fill=\"" << p.color << "\"><title>" << p.label << " " << F(D(r[p.key])) << " %</title></rect>";
      x += w;
    }
    y += kBarH + kGap;
  }
  o << "</svg>";
  return o.str();
}

}  // namespace

std::string TraceHtmlSection(const Json& t) {
  if (!t.is_object()) return "";
  std::ostringstream o;
  std::string files;
  for (const Json& f : t["files"]) files += (files.empty() ? "" : ", ") + S(f);
  o << "<h2>Profiler trace</h2>\n<p>" << HtmlEscape(files) << " (" << HtmlEscape(S(t["format"])) << ", " << S(t["steady_steps"])
    << " steady of " << S(t["steps"]) << " steps). Steady step " << S(t["step_ms"]) << " ms: compute " << S(t["compute_pct"])
    << " %, exposed communication " << S(t["exposed_comm_pct"]) << " % (all communication " << S(t["comm_pct"])
    << " %), un-overlapped copies " << S(t["memcpy_pct"]) << " %, idle " << S(t["idle_pct"]) << " %.</p>\n";
  o << "<h3>Step time per rank</h3>\n" << RankBars(t["ranks"]) << "\n";
  o << "<p>" << HtmlEscape(S(t["straggler_verdict"])) << ": " << HtmlEscape(S(t["straggler_why"])) << "</p>\n";
  o << "<h3>Top kernels (rank 0)</h3><table id=\"trace-kernels\"><tr><th>kernel</th><th>calls</th><th>ms per step</th><th>% of step</th></tr>";
  for (const Json& k : t["top_kernels"])
    o << "<tr><td>" << HtmlEscape(S(k["name"])) << "</td><td>" << S(k["count"]) << "</td><td>" << S(k["ms_per_step"]) << "</td><td>"
      << S(k["pct_of_step"]) << "</td></tr>";
  o << "</table>\n<h3>Collectives (rank 0)</h3><table id=\"trace-collectives\"><tr><th>kind</th><th>per step</th><th>ms per step</th><th>bus bandwidth GB/s</th></tr>";
  for (const Json& c : t["collectives"])
    o << "<tr><td>" << HtmlEscape(S(c["kind"])) << "</td><td>" << S(c["count_per_step"]) << "</td><td>" << S(c["ms_per_step"]) << "</td><td>"
      << S(c["busbw_gbps"]) << "</td></tr>";
  o << "</table>\n";
  if (!t["next"].empty()) {
    o << "<h3>Next</h3><ul>";
    for (const Json& n : t["next"]) o << "<li>" << HtmlEscape(S(n)) << "</li>";
    o << "</ul>\n";
  }
  return o.str();
}

}  // namespace mt::tools
