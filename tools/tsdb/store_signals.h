// What the host signals that attribution reasons with are called on one store.
//
// A job's own TSDB (written by our exporter) names them hw_* / ray_* with a `host` label. A
// site's central store holds the same physics under the names of the exporters it runs
// (dcgm-exporter, AMD device-metrics-exporter, node_exporter; exporter_catalog.h detects
// them) and keeps the host in the exporter's own label (Hostname, hostname, instance with a
// port). StoreSignals gives each signal as one PromQL expression aggregated `by (host)` —
// with `label_replace` turning the exporter's host label into `host` — so attribution runs
// the same statistics on either store. A signal the store lacks carries why it is missing
// (and how to enable it), so an answer says "not collected" instead of "quiet".
#pragma once
#include <string>
#include <vector>

#include "tools/tsdb/exporter_hosts.h"

namespace mt::tools {

// One per-host expression. Placeholders, replaced by the caller: `%R` the rate window,
// `%W` a presence window, `%D` the whole window of interest.
struct HostSignal {
  std::string expr;      // "" when the store lacks it
  std::string series;    // the concrete series read, for the answer ("node_netstat_Tcp_RetransSegs")
  std::string missing;   // when expr is empty: why, and how to get it
  bool present() const { return !expr.empty(); }
};

// A slowdown family's signal and the smallest shift that matters in its units.
struct FamilySignalOnStore {
  std::string family;   // thermal | rdma | tcp | io_stall | cpu_contention
  HostSignal signal;
  double floor = 0;
};

struct StoreSignals {
  std::string vocabulary;                     // "mt" (hw_* names) or "exporters"
  std::vector<FamilySignalOnStore> families;  // slowdown families, in a fixed order
  std::vector<HostSignal> presence;           // per-host sample counts over %W: who still reports
  HostSignal scrapes;                         // per-host count of `up` samples of any value over %W:
                                              // whether the store received the host's scrapes at all
  std::vector<HostSignal> fatal;              // per-host counts of fatal GPU events over %D
  HostSignal oom_kills;                       // per-host OOM kills over %D
  HostSignal mem_used_ratio;                  // per-host peak used/total memory over %D
  HostSignal gpu_util;                        // per-host mean GPU utilization (percent) over %D
};

// Today's per-job TSDB: our own names.
StoreSignals MtStoreSignals();
// A store fed by third-party exporters: expressions over the names the detected exporters
// actually export there.
StoreSignals ExporterStoreSignals(const std::vector<ExporterInStore>& exporters);

// `expr` with each `%X` placeholder replaced by its PromQL duration.
std::string FillWindows(std::string expr, const std::string& rate, const std::string& presence, const std::string& whole);

// Wraps an instant-vector expression so that its series carry `host`, read from the
// exporter's host labels (best first) or from `instance` without its port.
std::string WithHostLabel(const std::string& expr, const std::vector<std::string>& host_labels);

}  // namespace mt::tools
