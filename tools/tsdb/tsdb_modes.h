// The four query_tsdb modes. Each takes the context and its arguments and returns a
// ModeResult; the tool (query_tsdb_tool.cpp) adds the common fields and bounds the size.
#pragma once
#include <optional>
#include <string>

#include "mcp/json.h"
#include "tools/tsdb/tsdb_context.h"

namespace mt::tools {

// Metric families by prefix, hosts, time range, and whether the TSDB belongs to the job
// (the last tb_step against the log's last completed step from triage).
ModeResult RunDiscover(TsdbContext& tsdb, const Json& triage);

struct PromqlRequest {
  std::string query;
  std::optional<double> start, end, step;   // a range query when start or end is given
  std::optional<double> time;               // instant query time (default: end of data)
  int points = 20;                          // raw points returned at most
};
// An arbitrary query, summarised: per series min/mean/max/last, a per-host ranking,
// outliers, at most `points` raw points. Refuses (PrometheusError) or downsamples (a note)
// a query that would return too many points.
ModeResult RunPromql(TsdbContext& tsdb, const PromqlRequest& request);

// The seven playbooks of the tsdb-diagnosis methodology: hang, heartbeat, host_oom,
// node_failure, gpu_health, network_health, training_stability. `window` overrides the
// default window that triage gives (hang time, heartbeat-stop time, ...).
const std::vector<std::string>& PlaybookNames();
// The playbook for a triage class ("auto"): hang→hang, heartbeat*→heartbeat, ...
std::string PlaybookForClass(const std::string& triage_class);
ModeResult RunPlaybook(TsdbContext& tsdb, const std::string& name, const Json& triage,
                       std::optional<TsdbWindow> window);

// Sweeps every metric family at `time`: per host, the deviation from the other hosts and
// from the same host's own earlier baseline; ranks host × metric.
ModeResult RunCorrelate(TsdbContext& tsdb, double time, std::optional<long> step);

}  // namespace mt::tools
