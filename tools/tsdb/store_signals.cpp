#include "tools/tsdb/store_signals.h"

#include <algorithm>

namespace mt::tools {
namespace {

// XIDs that mean the GPU or its node is failing in hardware (drain and reset), from NVIDIA's
// XID catalog (https://docs.nvidia.com/deploy/xid-errors/): 48 double-bit ECC, 62 internal
// micro-controller halt, 64 ECC page retirement / row-remapper failure, 74 NVLink error,
// 79 fallen off the bus, 92 high single-bit ECC rate, 94/95 contained/uncontained ECC,
// 119/120 GSP RPC timeout / GSP error, 140 unrecovered ECC. Application-caused XIDs
// (13, 31, 43, 45: faults in the program, or its processes being cleaned up) are not here.
constexpr int kFatalXids[] = {48, 62, 64, 74, 79, 92, 94, 95, 119, 120, 140};

const DetectedExporter* Find(const std::vector<ExporterInStore>& ex, const std::string& id) {
  for (const auto& e : ex)
    if (e.exporter.id == id) return &e.exporter;
  return nullptr;
}

// The concrete names (prefix included) of `names` that the exporter exports in `family`.
std::vector<std::string> Present(const DetectedExporter& d, const std::string& family, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& p : d.present)
    if (p.family == family)
      for (const auto& n : names)
        if (std::find(p.series.begin(), p.series.end(), d.prefix + n) != p.series.end()) out.push_back(d.prefix + n);
  return out;
}

std::string MissingWhy(const DetectedExporter& d, const std::string& family) {
  for (const auto& m : d.missing)
    if (m.family == family) return d.id + " exports no " + family + " here: " + m.why;
  return d.id + " exports none of the " + family + " series mt reads";
}

std::string Joined(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// `agg by (host) (inner)` over the names present, `%s` in `inner` standing for each. Several
// names (two retransmit counters) are aggregated per host each, tagged so that `or` keeps
// both, and combined per host: a host exporting only one of them still counts. (One
// selector over a name regex would not do: a rate drops the names, and two series with the
// same remaining labels are an error.)
HostSignal Over(const std::vector<std::string>& labels, const std::vector<std::string>& names, const std::string& agg,
                const std::string& inner, double scale = 1) {
  HostSignal s;
  if (names.empty()) return s;
  std::vector<std::string> parts;
  for (const auto& n : names) {
    std::string e = inner;
    for (size_t at; (at = e.find("%s")) != std::string::npos;) e.replace(at, 2, n);
    if (scale != 1) e = std::to_string(static_cast<int>(scale)) + " * " + e;
    parts.push_back(agg + " by (host) (" + WithHostLabel(e, labels) + ")");
  }
  if (parts.size() == 1) {
    s.expr = parts.front();
  } else {
    std::string any;
    for (size_t i = 0; i < parts.size(); ++i)
      any += (i ? " or " : "") + std::string("label_replace(") + parts[i] + ", \"mt_series\", \"" + std::to_string(i) + "\", \"\", \"\")";
    s.expr = agg + " by (host) (" + any + ")";
  }
  s.series = Joined(names, ", ");
  return s;
}

HostSignal Absent(const std::string& why) { return HostSignal{"", "", why}; }

// A GPU signal from every GPU exporter on the store: a cluster may mix NVIDIA and AMD nodes,
// and AMD's exporter may run with and without its prefix. Each exporter's per-host expression
// covers its own hosts; `or` joins them.
HostSignal GpuSignal(const std::vector<ExporterInStore>& ex, const std::string& family,
                     const std::vector<std::string>& dcgm_names, const std::vector<std::string>& amd_names,
                     const std::string& agg, const std::string& inner) {
  std::string why;
  HostSignal out;
  for (const auto& e : ex) {
    const DetectedExporter& d = e.exporter;
    if (d.id != "dcgm_exporter" && d.id != "amd_device_metrics_exporter") continue;
    auto names = Present(d, family, d.id == "dcgm_exporter" ? dcgm_names : amd_names);
    // One name per exporter: MI300X reports edge temperature 0, so the first present name in
    // preference order (junction before edge) is the one to read; dcgm-exporter 4.9's names
    // come after the older ones they replace.
    if (!names.empty()) names.resize(1);
    if (names.empty()) {
      why += (why.empty() ? "" : "; ") + MissingWhy(d, family);
      continue;
    }
    HostSignal one = Over(d.host_labels, names, agg, inner);
    out.expr = out.expr.empty() ? one.expr : "(" + out.expr + ") or (" + one.expr + ")";
    out.series += (out.series.empty() ? "" : ", ") + one.series;
  }
  if (out.present()) return out;
  return Absent(why.empty() ? "no GPU exporter (dcgm-exporter or AMD device-metrics-exporter) reports on this store" : why);
}

HostSignal NodeSignal(const std::vector<ExporterInStore>& ex, const std::string& family, const std::vector<std::string>& names,
                      const std::string& agg, const std::string& inner, double scale = 1) {
  const DetectedExporter* d = Find(ex, "node_exporter");
  if (!d) return Absent("node_exporter does not report on this store");
  auto present = Present(*d, family, names);
  if (present.empty()) return Absent(MissingWhy(*d, family));
  return Over(d->host_labels, present, agg, inner, scale);
}

std::string FatalXidExpr(const std::vector<std::string>& labels, const std::string& xid) {
  const std::string m = "max_over_time(" + xid + "[%D])";
  std::string any;
  for (int x : kFatalXids) any += (any.empty() ? "" : " or ") + m + " == " + std::to_string(x);
  return "count by (host) (" + WithHostLabel(any, labels) + ")";
}

}  // namespace

std::string WithHostLabel(const std::string& expr, const std::vector<std::string>& host_labels) {
  // Innermost first, so the last one present wins: instance without its port, then `node`,
  // then the exporter's own labels from the weakest to the best, then a `host` label the
  // site's relabelling may already set. A label_replace whose source label is empty (or
  // absent) leaves `host` as it was.
  // The site's own `host` is kept aside first (the steps below overwrite `host`); every
  // signal aggregates `by (host)`, so the extra label never reaches an answer.
  std::string out = "label_replace(label_replace(" + expr + ", \"mt_site_host\", \"$1\", \"host\", \"(.+)\"), \"host\", " +
                    "\"$1\", \"instance\", \"\\\\[?(.*?)\\\\]?(:[0-9]+)?\")";
  std::vector<std::string> order{"node"};
  for (auto it = host_labels.rbegin(); it != host_labels.rend(); ++it)
    if (*it != "instance" && *it != "node" && *it != "host") order.push_back(*it);
  order.push_back("mt_site_host");
  for (const auto& l : order) out = "label_replace(" + out + ", \"host\", \"$1\", \"" + l + "\", \"(.+)\")";
  return out;
}

std::string FillWindows(std::string expr, const std::string& rate, const std::string& presence, const std::string& whole) {
  for (const auto& [key, value] : {std::pair<const char*, const std::string*>{"%R", &rate}, {"%W", &presence}, {"%D", &whole}})
    for (size_t at; (at = expr.find(key)) != std::string::npos;) expr.replace(at, 2, *value);
  return expr;
}

StoreSignals MtStoreSignals() {
  StoreSignals s;
  s.vocabulary = "mt";
  auto sig = [](const char* expr, const char* series) { return HostSignal{expr, series, ""}; };
  s.families = {
      {"thermal", sig("max by (host) (hw_gpu_temperature_celsius)", "hw_gpu_temperature_celsius"), 6},
      {"rdma", sig("sum by (host) (rate(hw_rdma_tx_retx_pkts_total[%R]))", "hw_rdma_tx_retx_pkts_total"), 5},
      {"tcp", sig("sum by (host) (rate(hw_tcp_retransmits_total[%R]))", "hw_tcp_retransmits_total"), 5},
      {"io_stall", sig("max by (host) (hw_io_pressure_full_pct)", "hw_io_pressure_full_pct"), 5},
      {"cpu_contention", sig("max by (host) (hw_procs_running)", "hw_procs_running"), 4},
  };
  s.presence = {sig("max by (host) (max_over_time(up[%W]))", "up"),
                sig("max by (host) (count_over_time(hw_gpu_power_watts[%W]))", "hw_gpu_power_watts")};
  s.scrapes = sig("sum by (host) (count_over_time(up[%W]))", "up");
  for (const char* m : {"hw_gpu_ras_umc_ue_total", "hw_gpu_ras_xgmi_ue_total", "hw_gpu_ras_gfx_ue_total", "hw_gpu_pcie_fatal_total"})
    s.fatal.push_back(HostSignal{std::string("sum by (host) (increase(") + m + "[%D]))", m, ""});
  s.oom_kills = sig("sum by (host) (increase(hw_oom_kills_total[%D]))", "hw_oom_kills_total");
  s.mem_used_ratio = sig("max by (host) (max_over_time(ray_node_mem_used[%D])) / max by (host) (max_over_time(ray_node_mem_total[%D]))",
                         "ray_node_mem_used / ray_node_mem_total");
  s.gpu_util = sig("avg by (host) (avg_over_time(ray_node_gpus_utilization[%D]))", "ray_node_gpus_utilization");
  return s;
}

StoreSignals ExporterStoreSignals(const std::vector<ExporterInStore>& ex) {
  StoreSignals s;
  s.vocabulary = "exporters";
  s.families = {
      {"thermal", GpuSignal(ex, "gpu_temp", {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_GPU_TEMP_CELSIUS"}, {"gpu_junction_temperature", "gpu_edge_temperature"}, "max", "%s"), 6},
      {"rdma", NodeSignal(ex, "net_rdma",
                          {"node_infiniband_roce_adp_retransmits_total", "node_infiniband_local_ack_timeout_errors_total",
                           "node_infiniband_packet_sequence_errors_total", "node_infiniband_out_of_sequence_packets_received_total"},
                          "sum", "rate(%s[%R])"), 5},
      {"tcp", NodeSignal(ex, "net_tcp_retrans", {"node_netstat_Tcp_RetransSegs"}, "sum", "rate(%s[%R])"), 5},
      // PSI's "full" io line: the share of time every task waited on I/O, in percent.
      {"io_stall", NodeSignal(ex, "host_pressure", {"node_pressure_io_stalled_seconds_total"}, "max", "rate(%s[%R])", 100), 5},
      {"cpu_contention", NodeSignal(ex, "host_cpu_runnable", {"node_procs_running"}, "max", "%s"), 4},
  };
  // Who still reports: every target's `up`, and the GPUs' power series.
  if (!ex.empty()) {
    s.presence.push_back(HostSignal{"max by (host) (" + WithHostLabel("max_over_time(up[%W])", {}) + ")", "up", ""});
    s.scrapes = HostSignal{"sum by (host) (" + WithHostLabel("count_over_time(up[%W])", {}) + ")", "up", ""};
  }
  HostSignal gpu_presence = GpuSignal(ex, "gpu_power", {"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_BOARD_POWER_WATTS"},
                                      {"gpu_package_power", "gpu_power_usage", "gpu_average_package_power"}, "max",
                                      "count_over_time(%s[%W])");
  if (gpu_presence.present()) s.presence.push_back(gpu_presence);

  if (const DetectedExporter* d = Find(ex, "dcgm_exporter")) {
    const auto& labels = d->host_labels;
    if (auto xid = Present(*d, "gpu_xid_or_ras", {"DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_XID_ERROR"}); !xid.empty())
      s.fatal.push_back(HostSignal{FatalXidExpr(labels, xid.front()), xid.front() + " (fatal XIDs)", ""});
    for (const auto& [family, name] : {std::pair<const char*, const char*>{"gpu_remapped_rows", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"},
                                       {"gpu_ecc", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"}})
      if (auto n = Present(*d, family, {name}); !n.empty()) s.fatal.push_back(Over(labels, n, "sum", "increase(%s[%D])"));
  }
  for (const auto& e : ex)   // AMD's exporter may run with and without its prefix
    if (e.exporter.id == "amd_device_metrics_exporter")
      if (auto n = Present(e.exporter, "gpu_ecc", {"gpu_ecc_uncorrect_total"}); !n.empty())
        s.fatal.push_back(Over(e.exporter.host_labels, n, "sum", "increase(%s[%D])"));

  s.oom_kills = NodeSignal(ex, "host_oom", {"node_vmstat_oom_kill"}, "sum", "increase(%s[%D])");
  if (const DetectedExporter* d = Find(ex, "node_exporter"); d &&
      Present(*d, "host_mem", {"node_memory_MemAvailable_bytes", "node_memory_MemTotal_bytes"}).size() == 2) {
    const std::string p = d->prefix;
    s.mem_used_ratio = HostSignal{
        "max by (host) (" + WithHostLabel("1 - min_over_time(" + p + "node_memory_MemAvailable_bytes[%D]) / max_over_time(" + p +
                                              "node_memory_MemTotal_bytes[%D])",
                                          d->host_labels) + ")",
        "node_memory_MemAvailable_bytes, node_memory_MemTotal_bytes", ""};
  } else {
    s.mem_used_ratio = Absent(d ? MissingWhy(*d, "host_mem") : "node_exporter does not report on this store");
  }
  // (dcgm-exporter 4.9's utilization is probably DCGM_FI_DEV_GPU_UTIL_RATIO, 0..1, but no source
  // read confirms the rename: configs/exporter_families.yaml lists it as unverified, so it is
  // not read, and such a store says utilization is missing.)
  s.gpu_util = GpuSignal(ex, "gpu_util", {"DCGM_FI_DEV_GPU_UTIL"}, {"gpu_gfx_activity"}, "avg", "avg_over_time(%s[%D])");
  return s;
}

}  // namespace mt::tools
