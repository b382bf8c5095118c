#include "tools/tsdb/store_coverage.h"

#include <algorithm>
#include <cmath>

#include "tools/tsdb/tsdb_series.h"

namespace mt::tools {
namespace {

// A silence that matters: the same bar VanishedHosts uses for a host that stopped reporting.
double Silence(double scrape) { return std::max(300.0, 5 * scrape); }

std::string Minutes(double seconds) { return Num(std::round(seconds / 6) / 10) + " min"; }

std::string HostList(const std::vector<std::string>& hosts) {
  std::string out;
  for (size_t i = 0; i < hosts.size() && i < 4; ++i) out += (i ? ", " : "") + hosts[i];
  if (hosts.size() > 4) out += " and " + std::to_string(hosts.size() - 4) + " more";
  return out;
}

}  // namespace

std::string StoreCoverage::verdict() const {
  if (stale) return "stale";
  return gaps.empty() && ended.empty() ? "complete" : "gappy";
}

std::string StoreCoverage::Describe(const TsdbWindow& window) const {
  std::string out;
  auto add = [&out](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
  if (stale)
    add("the store's samples end at " + IsoTime(data_end) + ", " + Minutes(window.end - data_end) +
        " before the window's end: nothing after it is judged (an agent or its remote write stopped or is behind, or "
        "retention dropped it)");
  if (!ended.empty())
    add("the samples of " + HostList(ended) +
        " end, `up` included, with no failed scrape on record while the other hosts go on: the host died with the agent "
        "that scraped it, or that agent or its remote write stopped; the scheduler's node state (`scontrol show node`, "
        "`sinfo -R`) tells which");
  if (!gaps.empty()) {
    std::vector<std::string> hosts;
    for (const auto& g : gaps) hosts.push_back(g.host);
    const HostGap& worst = gaps.front();
    add(std::to_string(gaps.size()) + " host(s) have stretches with no sample at all, `up` included (" + HostList(hosts) +
        "; the longest " + Minutes(worst.end - worst.start) + " on " + worst.host + " from " + IsoTime(worst.start) +
        "): scrapes lost on the way to the store, not failed ones, so signals there are unknown, not quiet");
  }
  return out;
}

StoreCoverage ReadCoverage(TsdbContext& tsdb, double scrape) {
  StoreCoverage c;
  const HostSignal& scrapes = tsdb.Signals().scrapes;
  const TsdbWindow w = tsdb.data();
  if (!scrapes.present() || w.seconds() <= 0) return c;
  scrape = std::max(scrape, 1.0);
  c.step = ChooseStep(w.seconds(), scrape);
  // Each point counts the samples of the two steps before it: one late or lost scrape is not
  // a hole, two in a row are; and the last sample before a hole lies up to two steps before
  // the last point that still counts it.
  const double reach = 2 * c.step;
  const std::string window = PromDuration(reach);
  for (const auto& s : tsdb.Range(FillWindows(scrapes.expr, window, window, window), w, c.step)) {
    const std::string host = s.label("host");
    if (host.empty() || s.points.empty()) continue;
    // A target scraped less often than the step leaves regular short holes in the points:
    // a hole is a spacing well beyond the host's usual one (and beyond one step).
    std::vector<double> spacing;
    for (size_t i = 1; i < s.points.size(); ++i) spacing.push_back(s.points[i].t - s.points[i - 1].t);
    const double usual = spacing.empty() ? c.step : Median(spacing);
    HostGap gap{host, 0, 0, 0};
    for (size_t i = 1; i < s.points.size(); ++i) {
      if (spacing[i - 1] < std::max(1.5 * c.step, 3 * usual)) continue;
      const double from = s.points[i - 1].t - reach, to = s.points[i].t;   // between two samples
      gap.missing_s += to - from;
      if (to - from > gap.end - gap.start) gap.start = from, gap.end = to;
    }
    if (gap.missing_s > 0) c.gaps.push_back(gap);
    // Points reach past the last sample, except at the window's end.
    const double last = s.points.back().t;
    c.samples_end[host] = last >= w.end - c.step ? std::min(last, w.end) : last - reach;
    c.data_end = std::max(c.data_end, c.samples_end[host]);
  }
  std::sort(c.gaps.begin(), c.gaps.end(), [](const HostGap& a, const HostGap& b) { return a.missing_s > b.missing_s; });
  for (const auto& [host, end] : c.samples_end)
    if (c.data_end - end >= Silence(scrape)) c.ended.push_back(host);
  c.stale = c.data_end > 0 && w.end - c.data_end >= Silence(scrape);
  return c;
}

}  // namespace mt::tools
