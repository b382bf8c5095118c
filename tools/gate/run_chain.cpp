#include "tools/gate/run_chain.h"

#include <algorithm>
#include <map>
#include <memory>

#include "launcher/approval/audit.h"
#include "launcher/approval/store.h"
#include "launcher/launch/restart_plan.h"
#include "tools/logs/scan_cache.h"
#include "tools/logs/triage.h"
#include "tools/logs/workspace.h"
#include "tools/perf/goodput.h"

namespace mt::tools {
namespace {

namespace fs = std::filesystem;
using launch::approval::PlanRecord;

constexpr int kMaxAttempts = 64;

const nlohmann::json* RestartOf(const PlanRecord& r) {
  if (r.kind != "submit" || !r.plan.is_object()) return nullptr;
  auto it = r.plan.find("restart");
  return it != r.plan.end() && it->is_object() ? &*it : nullptr;
}

std::string ParentOf(const PlanRecord& r) {
  const nlohmann::json* x = RestartOf(r);
  if (!x) return "";
  auto p = x->find("parent_job");
  return p != x->end() && p->is_string() ? p->get<std::string>() : "";
}

struct Link {
  std::string job;
  std::optional<int64_t> resume_step;
  const PlanRecord* record = nullptr;   // the restart plan that started it
};

// Oldest first: parents from the jobs' plans, children from the submitted restart records.
std::vector<Link> FindChain(const fs::path& workspace, const std::vector<PlanRecord>& records, const std::string& job) {
  std::map<std::string, const PlanRecord*> started_by;   // job → its restart record
  for (const auto& r : records)
    if (r.state == "submitted" && !r.job_id.empty() && RestartOf(r)) started_by.emplace(r.job_id, &r);
  std::vector<Link> back;
  std::string cur = job;
  for (int i = 0; i < kMaxAttempts && !cur.empty(); ++i) {
    Link l{cur, std::nullopt, nullptr};
    std::string parent;
    if (auto it = started_by.find(cur); it != started_by.end()) {
      l.record = it->second;
      parent = ParentOf(*it->second);
    }
    launch::Plan plan;
    if (launch::LoadJobPlan(workspace, cur, &plan).ok() && plan.restart) {
      l.resume_step = plan.restart->resume_step;
      if (parent.empty()) parent = plan.restart->parent_job;
    } else if (l.record) {
      const nlohmann::json& rs = *RestartOf(*l.record);
      if (rs.contains("resume_step") && rs["resume_step"].is_number_integer()) l.resume_step = rs["resume_step"].get<int64_t>();
    }
    back.push_back(l);
    if (std::any_of(back.begin(), back.end() - 1, [&](const Link& b) { return b.job == parent; })) break;   // a loop
    cur = parent;
  }
  std::reverse(back.begin(), back.end());
  for (int i = 0; static_cast<int>(back.size()) < kMaxAttempts && i < kMaxAttempts; ++i) {
    const PlanRecord* child = nullptr;
    for (const auto& r : records)
      if (r.state == "submitted" && !r.job_id.empty() && ParentOf(r) == back.back().job && (!child || r.created < child->created))
        child = &r;
    if (!child || std::any_of(back.begin(), back.end(), [&](const Link& b) { return b.job == child->job_id; })) break;
    Link l{child->job_id, std::nullopt, child};
    const nlohmann::json& rs = *RestartOf(*child);
    if (rs.contains("resume_step") && rs["resume_step"].is_number_integer()) l.resume_step = rs["resume_step"].get<int64_t>();
    back.push_back(l);
  }
  return back;
}

}  // namespace

std::optional<GoodputView> GoodputOfRun(const fs::path& workspace, const fs::path& approvals_dir, const std::string& job,
                                        const std::string& now) {
  const Workspace ws(workspace);
  std::string id = job;
  try {
    id = ws.Resolve(job).id;
  } catch (const std::exception&) {
    // not a job of this workspace: no chain
  }
  std::vector<PlanRecord> records;
  if (!approvals_dir.empty() && fs::is_directory(approvals_dir))
    records = launch::approval::ApprovalStore(approvals_dir).List(launch::approval::UnixNow());
  const std::vector<Link> links = FindChain(workspace, records, id);
  if (links.size() < 2) return std::nullopt;
  std::vector<ChainAttempt> chain;
  std::vector<std::shared_ptr<const CachedScan>> keep;   // the scans the chain points into
  const TriageOptions topt = MakeTriageOptions(now.empty() ? std::nullopt : std::optional<std::string>(now), false);
  for (size_t i = 0; i < links.size(); ++i) {
    ChainAttempt a;
    a.job = links[i].job;
    a.attempt = static_cast<int>(i);
    a.resume_step = links[i].resume_step;
    if (const PlanRecord* r = links[i].record) {
      a.requested = r->created;
      a.decided = r->decided;
      a.approved_via = r->via;
    }
    try {
      const JobFiles files = ws.Resolve(a.job);
      const ScanHandle h = ScanCache::Shared().Get(files.log);
      keep.push_back(h.data);
      a.scan = &h.data->scan;
      const Json t = TriageJob(files, topt, ScanCache::Shared());
      a.cls = t.value("class", "");
      a.status = t.value("status", "");
    } catch (const std::exception&) {
      a.scan = nullptr;   // no log yet: counted in the chain, not in the times
    }
    chain.push_back(std::move(a));
  }
  return ComputeGoodput(chain);
}

}  // namespace mt::tools
