// Whether the store holds the job's data at all: a diagnosis from absent samples is only as
// good as the pipeline that delivered them. On a site's shared store, samples travel from
// exporters through scraping agents and remote write; an agent that stops or falls behind
// leaves holes that look like quiet hosts, or like dead ones.
//
// Read from each host's `up` samples, of any value: a scrape that failed still writes
// `up` = 0 (Prometheus records the failure), so a host that died keeps its `up` samples while
// a host whose samples stopped arriving has none. Three findings:
//  - gaps: stretches inside a host's span with no `up` sample at all (lost scrapes);
//  - hosts whose samples end, `up` included, while the others go on: the host died with the
//    agent that scraped it, or that agent / its remote write stopped — the store alone
//    cannot tell which;
//  - stale: the store's newest sample of any host ends before the window does (remote write
//    behind, an agent down, retention) — nothing after it can be judged.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "tools/tsdb/tsdb_context.h"

namespace mt::tools {

struct HostGap {
  std::string host;
  double start = 0, end = 0;   // the longest hole's bounds (seconds since the epoch)
  double missing_s = 0;        // all holes of the host together
};

struct StoreCoverage {
  double step = 0;                              // the resolution holes are measured at
  double data_end = 0;                          // the newest `up` sample of any host; 0: none
  std::map<std::string, double> samples_end;    // host → its newest `up` sample of any value
  std::vector<HostGap> gaps;                    // hosts with holes, largest first
  std::vector<std::string> ended;               // hosts whose `up` samples end ≥ 5 min before the others'
  bool stale = false;                           // data_end well before the window's end
  std::string verdict() const;                  // complete | gappy | stale
  // One sentence for the answer; "" when complete.
  std::string Describe(const TsdbWindow& window) const;
};

// `scrape` is the scrape interval in seconds (ReadSymptom's). One range query.
StoreCoverage ReadCoverage(TsdbContext& tsdb, double scrape);

}  // namespace mt::tools
