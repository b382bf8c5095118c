// query_tsdb mode "discover": what the TSDB holds and whether it is the job's.
#include <algorithm>
#include <cmath>

#include "tools/tsdb/tsdb_modes.h"

namespace mt::tools {
namespace {

// The families of reference §4.2, then the third-party exporters' name spaces
// (dcgm-exporter, AMD device-metrics-exporter with and without its prefix, node_exporter);
// longest prefix first where they nest.
const std::vector<std::string>& Prefixes() {
  static const std::vector<std::string> p = {"hw_gpu_", "hw_tcp_", "hw_rdma_", "hw_io_", "hw_mem_", "hw_oom_",
                                             "hw_net_", "hw_procs_", "hw_dmesg_", "hw_", "ray_node_", "ray_", "tb_",
                                             "DCGM_FI_PROF_", "DCGM_FI_DEV_", "DCGM_", "amd_gpu_", "amd_pcie_", "amd_",
                                             "gpu_", "pcie_", "node_infiniband_", "node_netstat_", "node_pressure_",
                                             "node_"};
  return p;
}

// The exporters feeding the store, as the answer's `exporters` member, and one clause for
// the verdict ("dcgm_exporter on 4 hosts (6 families; 3 missing)").
Json ExportersJson(TsdbContext& tsdb, std::string* clause) {
  Json out = Json::array();
  for (const auto& e : tsdb.Exporters()) {
    const DetectedExporter& d = e.exporter;
    Json fams = Json::array(), missing = Json::array();
    for (const auto& p : d.present) fams.push_back({{"family", p.family}, {"series", p.series}});
    for (const auto& m : d.missing) missing.push_back({{"family", m.family}, {"why", m.why}});
    out.push_back({{"exporter", d.id}, {"prefix", d.prefix}, {"detected_by", d.detected_by}, {"host_label", e.host_label},
                   {"hosts", e.hosts.size()}, {"families", fams}, {"missing", missing}});
    *clause += (clause->empty() ? "" : ", ") + d.id + (d.prefix.empty() ? "" : " (" + d.prefix + "*)") + " on " +
               std::to_string(e.hosts.size()) + " hosts (" + std::to_string(d.present.size()) + " families; " +
               std::to_string(d.missing.size()) + " missing)";
  }
  return out;
}

}  // namespace

ModeResult RunDiscover(TsdbContext& tsdb, const Json& triage) {
  ModeResult r;
  r.window = tsdb.data();
  const std::vector<std::string>& names = tsdb.MetricNames();
  std::map<std::string, std::vector<std::string>> families;
  for (const std::string& name : names) {
    std::string fam = "other";
    for (const auto& p : Prefixes())
      if (name.rfind(p, 0) == 0) {
        fam = p;
        break;
      }
    families[fam].push_back(name);
  }
  Json fams = Json::array();
  for (auto& [prefix, list] : families) {
    Json shown = Json::array();
    for (size_t i = 0; i < list.size() && i < 12; ++i) shown.push_back(list[i]);
    fams.push_back({{"prefix", prefix}, {"count", list.size()}, {"metrics", shown}});
  }
  r.extra["families"] = fams;
  r.extra["metric_count"] = names.size();
  std::string exporters_clause;
  if (Json ex = ExportersJson(tsdb, &exporters_clause); !ex.empty()) r.extra["exporters"] = ex;
  const auto& hosts = tsdb.Hosts();

  // up at the end of the data: which scrape targets were still answering.
  auto up = tsdb.Instant("sum by (job) (up)", tsdb.data().end);
  Json upj = Json::object();
  for (const auto& s : up)
    if (!s.points.empty()) upj[s.label("job").empty() ? "all" : s.label("job")] = Round(s.points.back().v);
  r.extra["up_at_end"] = upj;

  Json ev = {{"hosts", hosts.size()}, {"metrics", names.size()}};
  std::string verdict = "info";
  auto last_tb = tsdb.Instant("max(last_over_time(tb_step[" + PromDuration(tsdb.data().seconds() + 60) + "]))",
                              tsdb.data().end);
  std::optional<long> log_last;
  if (triage.is_object() && triage.contains("last_step") && triage["last_step"].is_number())
    log_last = triage["last_step"].get<long>();
  if (!last_tb.empty() && !last_tb[0].points.empty()) {
    long tb = static_cast<long>(last_tb[0].points.back().v);
    ev["tsdb_last_step"] = tb;
    if (log_last) {
      ev["log_last_step"] = *log_last;
      // The TB plugin drips one step per poll and may lag the log a little; a TSDB whose
      // last step is far from the log's belongs to another job (or a restart).
      long diff = std::labs(tb - *log_last);
      verdict = diff <= std::max(10L, *log_last / 50) ? "match" : "mismatch";
    }
  } else {
    verdict = "no tb_step";
  }
  r.findings.push_back({{"rule", "the TSDB belongs to the job: last tb_step ≈ the log's last completed step"},
                        {"verdict", verdict},
                        {"evidence", ev}});
  r.verdict = std::to_string(names.size()) + " metrics in " + std::to_string(families.size()) + " families from " +
              std::to_string(hosts.size()) + " hosts, " + IsoTime(tsdb.data().start) + " to " + IsoTime(tsdb.data().end) +
              (verdict == "match"      ? "; tb_step matches the log's last step"
               : verdict == "mismatch" ? "; WARNING: tb_step does not match the log's last step (another job's TSDB?)"
                                       : "") +
              (exporters_clause.empty() ? "" : "; exporters: " + exporters_clause);
  return r;
}

}  // namespace mt::tools
