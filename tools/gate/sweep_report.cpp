#include "tools/gate/sweep_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <tuple>

namespace mt::tools {

namespace {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Signed(double v) { return (v >= 0 ? "+" : "") + Fixed(v, 1); }

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters even when escaped.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') out += '?';
        else out += c;
    }
  }
  return out;
}

std::string MarkdownCell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
  return out;
}

std::string TgsCell(const std::optional<SweepResult>& r) {
  if (!r) return "—";
  if (r->status != "ok") return r->status;
  return Fixed(r->tgs, 1);
}

bool Fails(const std::string& verdict) { return verdict == "regression" || verdict == "new_failure" || verdict == "error"; }

std::string Explain(const SweepRow& row, double threshold) {
  const std::string what = row.model + " on " + std::to_string(row.nodes) + " node" + (row.nodes == 1 ? "" : "s");
  if (row.verdict == "regression")
    return what + ": steady TGS " + Fixed(row.current.tgs, 1) + " vs " + Fixed(row.baseline->tgs, 1) + " (" +
           Signed(*row.delta_pct) + " %, threshold -" + Fixed(threshold, 1) + " %)";
  if (row.verdict == "error") return what + ": not measured (" + row.current.status + "): " + row.current.detail;
  if (row.verdict == "new_failure")
    return what + ": " + row.current.status + (row.baseline ? " (it ran before: TGS " + Fixed(row.baseline->tgs, 1) + ")" : " (no baseline)") +
           (row.current.detail.empty() ? "" : ": " + row.current.detail);
  return what + ": " + row.verdict;
}

}  // namespace

SweepComparison CompareSweep(const std::vector<SweepResult>& baseline, const std::vector<SweepResult>& current,
                             double threshold_pct) {
  SweepComparison c;
  c.threshold_pct = threshold_pct;
  if (!baseline.empty()) c.baseline_label = baseline.front().state;
  if (!current.empty()) c.current_label = current.front().state;
  std::map<std::pair<std::string, int>, const SweepResult*> base;
  for (const auto& r : baseline) base[{r.model, r.nodes}] = &r;
  for (const auto& cur : current) {
    SweepRow row;
    row.model = cur.model;
    row.nodes = cur.nodes;
    row.current = cur;
    if (auto it = base.find({cur.model, cur.nodes}); it != base.end()) row.baseline = *it->second;
    const bool base_ok = row.baseline && row.baseline->status == "ok" && row.baseline->tgs > 0;
    if (cur.status == "timeout" || cur.status == "error" || cur.status == "cancelled") {
      row.verdict = "error";   // nothing was measured: the sweep cannot vouch for this model
    } else if (cur.status != "ok") {
      row.verdict = row.baseline && row.baseline->status == "failed" ? "still_failing" : "new_failure";
    } else if (!row.baseline) {
      row.verdict = "new";
    } else if (!base_ok) {
      row.verdict = "fixed";
    } else {
      row.delta_pct = (cur.tgs - row.baseline->tgs) / row.baseline->tgs * 100.0;
      row.verdict = *row.delta_pct < -threshold_pct ? "regression" : *row.delta_pct > threshold_pct ? "improved" : "ok";
    }
    if (row.verdict == "regression") ++c.regressions;
    if (row.verdict == "new_failure") ++c.new_failures;
    if (row.verdict == "error") ++c.errors;
    c.rows.push_back(std::move(row));
  }
  std::sort(c.rows.begin(), c.rows.end(),
            [](const SweepRow& a, const SweepRow& b) { return std::tie(a.model, a.nodes) < std::tie(b.model, b.nodes); });
  return c;
}

std::string SweepMarkdown(const SweepComparison& c, const std::string& sweep_name) {
  std::string base = c.baseline_label.empty() ? "baseline" : c.baseline_label;
  std::string cur = c.current_label.empty() ? "current" : c.current_label;
  std::string out = "## Sweep " + MarkdownCell(sweep_name) + ": " + MarkdownCell(cur) + " vs " + MarkdownCell(base) + "\n\n";
  out += "| model | nodes | " + MarkdownCell(base) + " TGS | " + MarkdownCell(cur) + " TGS | Δ % | verdict |\n";
  out += "|---|---:|---:|---:|---:|---|\n";
  for (const auto& row : c.rows) {
    out += "| " + MarkdownCell(row.model) + " | " + std::to_string(row.nodes) + " | " + TgsCell(row.baseline) + " | " +
           TgsCell(row.current) + " | " + (row.delta_pct ? Signed(*row.delta_pct) : std::string("—")) + " | " +
           (Fails(row.verdict) ? "**" + row.verdict + "**" : row.verdict) + " |\n";
  }
  out += "\nSteady-state TGS = mean tokens/s/device after warm-up; threshold " + Fixed(c.threshold_pct, 1) + " %. ";
  if (c.failed()) {
    out += "**FAILED**: " + std::to_string(c.regressions) + " regression(s), " + std::to_string(c.new_failures) +
           " new failure(s), " + std::to_string(c.errors) + " run(s) not measured.\n";
    for (const auto& row : c.rows)
      if (Fails(row.verdict)) out += "- " + MarkdownCell(Explain(row, c.threshold_pct)) + "\n";
  } else {
    out += "Passed: no regression beyond the threshold, no new failure.\n";
  }
  return out;
}

std::string SweepJUnit(const SweepComparison& c, const std::string& sweep_name, double seconds) {
  int failures = c.regressions + c.new_failures;
  const std::string errors = std::to_string(c.errors);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"mt sweep\" tests=\"" + std::to_string(c.rows.size()) + "\" failures=\"" +
         std::to_string(failures) + "\" errors=\"" + errors + "\" time=\"" + Fixed(seconds, 3) + "\">\n";
  out += "  <testsuite name=\"" + XmlEscape("sweep." + sweep_name) + "\" tests=\"" + std::to_string(c.rows.size()) +
         "\" failures=\"" + std::to_string(failures) + "\" errors=\"" + errors + "\" skipped=\"0\" time=\"" + Fixed(seconds, 3) + "\">\n";
  for (const auto& row : c.rows) {
    out += "    <testcase classname=\"" + XmlEscape("sweep." + sweep_name + "." + row.model) + "\" name=\"" +
           XmlEscape("nodes=" + std::to_string(row.nodes)) + "\">\n";
    if (Fails(row.verdict)) {
      const char* element = row.verdict == "error" ? "error" : "failure";
      out += "      <" + std::string(element) + " type=\"" + row.verdict + "\" message=\"" + XmlEscape(Explain(row, c.threshold_pct)) + "\">" +
             XmlEscape(Explain(row, c.threshold_pct)) + "</" + element + ">\n";
    }
    std::string info = "verdict " + row.verdict + "; current " + TgsCell(row.current) + " (job " + row.current.job_id + ")";
    if (row.baseline) info += "; baseline " + TgsCell(row.baseline) + (row.baseline->job_id.empty() ? "" : " (job " + row.baseline->job_id + ")");
    if (row.delta_pct) info += "; delta " + Signed(*row.delta_pct) + " %";
    out += "      <system-out>" + XmlEscape(info) + "</system-out>\n";
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

Json SweepResultsToJson(const std::vector<SweepResult>& results, const std::string& sweep_name) {
  Json arr = Json::array();
  for (const auto& r : results) {
    arr.push_back({{"state", r.state}, {"model", r.model}, {"nodes", r.nodes}, {"status", r.status}, {"job_id", r.job_id},
                   {"tgs", r.tgs}, {"tgs_std", r.tgs_std}, {"steps", r.steps}, {"detail", r.detail}});
  }
  return {{"sweep", sweep_name}, {"results", arr}};
}

std::vector<SweepResult> SweepResultsFromJson(const Json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("results") || !j["results"].is_array())
    throw std::runtime_error(where + ": a baseline file is {\"sweep\": …, \"results\": [...]} as `mt sweep --write-baseline` writes it");
  std::vector<SweepResult> out;
  for (size_t i = 0; i < j["results"].size(); ++i) {
    const Json& r = j["results"][i];
    const std::string at = where + ": results[" + std::to_string(i) + "]";
    if (!r.is_object() || !r.contains("model") || !r["model"].is_string() || !r.contains("nodes") ||
        !r["nodes"].is_number_integer() || !r.contains("status") || !r["status"].is_string())
      throw std::runtime_error(at + " needs model (string), nodes (integer) and status (string)");
    SweepResult s;
    s.state = "baseline";
    s.model = r["model"];
    s.nodes = r["nodes"];
    s.status = r["status"];
    if (s.status == "ok") {
      if (!r.contains("tgs") || !r["tgs"].is_number() || !(r["tgs"].get<double>() > 0))
        throw std::runtime_error(at + ": status ok needs a positive tgs");
      s.tgs = r["tgs"];
    }
    if (r.contains("tgs_std") && r["tgs_std"].is_number()) s.tgs_std = r["tgs_std"];
    if (r.contains("steps") && r["steps"].is_number_unsigned()) s.steps = r["steps"];
    if (r.contains("job_id") && r["job_id"].is_string()) s.job_id = r["job_id"];
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace mt::tools
