#include "tools/catalog/job_watch.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fstream>

#include "base/atomic_file.h"
#include "base/hostlist.h"
#include "base/sha256.h"
#include "launcher/approval/audit.h"
#include "launcher/launch/submit.h"
#include "tools/catalog/query_tsdb_tool.h"
#include "tools/gate/restart_request.h"
#include "tools/logs/triage.h"
#include "tools/supervise/node_ledger.h"

namespace mt::tools {
namespace {

namespace fs = std::filesystem;
using Sink = std::function<void(int64_t, const WatchFinding&)>;

JobFiles ResolveTarget(const fs::path& workspace, const std::string& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return DescribeLogFile(target);
  return Workspace(workspace).Resolve(target);
}

// The chain's key: the job id, or a log's name with a digest of its path, so that a log given
// by path is kept apart from another of the same name elsewhere.
std::string ChainKey(const JobFiles& job, const std::string& id) {
  if (!job.id.empty()) return id;
  return id + "-" + base::Sha256Hex(fs::absolute(job.log).lexically_normal().string()).substr(0, 12);
}

WatchMemory LoadMemory(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return {};
  try {
    return WatchMemory::FromJson(Json::parse(in));
  } catch (const std::exception&) {
    return {};
  }
}

fs::path StateDir(const fs::path& workspace, const JobFiles& job, const std::string& id) {
  fs::path dir = workspace / ".mt" / "watch" / ChainKey(job, id);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
  return dir;
}

// One watcher per chain: two would each decide, notify and ask for the same restart.
int LockChain(const fs::path& dir) {
  const fs::path file = dir / "watch.lock";
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot open " + file.string() + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    throw std::runtime_error("this job is already being watched (" + file.string() + " is locked by another watch)");
  }
  return fd;
}

}  // namespace

JobWatch::~JobWatch() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

JobWatch::JobWatch(JobWatchEnv env, const std::string& target, JobWatchOptions options)
    : env_(std::move(env)),
      options_(std::move(options)),
      job_(ResolveTarget(env_.workspace, target)),
      target_(target),
      id_(!job_.id.empty() ? job_.id : job_.log.stem().string()),
      dir_(StateDir(env_.workspace, job_, id_)),
      lock_fd_(LockChain(dir_)),
      memory_(LoadMemory(dir_ / "memory.json")),
      outbox_(dir_) {
  if (!memory_.job.empty() && memory_.job != target_) Follow(memory_.job);   // the chain's newest attempt
}

std::string JobWatch::BackendState() const {
  nlohmann::json st;
  if (!launch::JobStatus(env_.workspace, target_, &st).ok()) return "";   // not a job mt submitted
  return st.value("state", "");
}

void JobWatch::Report(int64_t now, const WatchFinding& f, const Sink& sink) {
  Notice n{"", now, id_, f.kind, f.text, f.detail};
  if (base::Status st = outbox_.Add(n); !st.ok()) options_.warn("notice not recorded: " + st.message());
  sink(now, f);
}

// Points the watch at attempt `job` (a restart's job): its log may not exist yet (a Slurm job
// still pending), and then triage waits for a later look.
void JobWatch::Follow(const std::string& job) {
  target_ = job;
  try {
    job_ = Workspace(env_.workspace).Resolve(job);
  } catch (const std::exception&) {
    job_ = JobFiles{};
  }
}

// A restart decision: the restart plan through the gate (once), with the node ledger's repeat
// offenders added to the decision's exclusions.
void JobWatch::AskRestart(const Decision& d, int64_t now, const Sink& sink) {
  Json probe;
  if (!launch::JobStatus(env_.workspace, target_, &probe).ok()) {
    Report(now, {"restart", "restart decided, but " + target_ + " was not submitted by mt here: there is no plan to "
                            "resubmit; restart it by hand", {{"state", "unavailable"}}}, sink);
    return;
  }
  RestartRequest r{target_, memory_.restarts + 1, d.exclude, d.resume_step, d.reason};
  std::vector<std::string> offenders;
  if (NodeLedger::ForWorkspace(env_.workspace).Excluded(OffenderRule{}, now, &offenders).ok())
    r.exclude.insert(r.exclude.end(), offenders.begin(), offenders.end());
  launch::approval::PlanRecord rec;
  RestartOutcome outcome;
  std::string err = RequestRestart(env_.approvals, r, options_.requester, &rec, &outcome);
  if (!outcome.exclusion_note.empty()) options_.warn("restart of " + target_ + ": " + outcome.exclusion_note);
  if (rec.id.empty()) {
    Report(now, {"restart", "restart of " + target_ + " not requested: " + err, {{"state", "error"}, {"error", err}}}, sink);
    return;
  }
  if (!err.empty()) options_.warn("restart plan " + rec.id + ": " + err);
  if (rec.state == "denied" || rec.state == "expired" || rec.state == "failed") {
    // Decided before for this job (a job is restarted once): a human's no, or a restart that
    // could not run, is not asked again.
    Report(now, {"restart", "restart plan " + rec.id + " for " + target_ + " was " + rec.state + " before: not asked again",
                 {{"state", rec.state}, {"plan_id", rec.id}}}, sink);
    return;
  }
  memory_.restart_plan = rec.id;
  if (rec.state == "pending") {
    memory_.restart_state = "pending";
    Report(now, {"restart", "restart plan " + rec.id + " waits for a human: mt approve " + rec.id + " (" + outcome.policy + ")",
                 {{"state", "pending_approval"}, {"plan_id", rec.id}, {"policy", outcome.policy},
                  {"exclusion_note", outcome.exclusion_note},
                  {"how_to_approve", {"mt approve " + rec.id, "the /approvals page of mt serve --http"}}}},
           sink);
  }
}

// The restart plan's progress: submitted (the watch follows the new job), or refused.
void JobWatch::FollowRestart(int64_t now, const Sink& sink) {
  launch::approval::PlanRecord rec;
  if (!env_.approvals.Store().Get(memory_.restart_plan, now, &rec).ok()) return;
  if (rec.state == memory_.restart_state || rec.state == "pending" || rec.state == "approved") return;
  memory_.restart_state = rec.state;
  Json detail = {{"state", rec.state}, {"plan_id", rec.id}, {"approver", rec.approver}, {"via", rec.via}};
  if (rec.state == "submitted") {
    detail["job"] = rec.job_id;
    detail["parent_job"] = target_;
    Report(now, {"restart", "restarted " + target_ + " as job " + rec.job_id + " (plan " + rec.id + ", approved by " + rec.approver +
                                " via " + rec.via + ")", detail}, sink);
    memory_.StartAttempt(rec.job_id);
    Follow(rec.job_id);
    return;
  }
  detail["error"] = rec.error;
  Report(now, {"restart", "restart plan " + rec.id + " " + rec.state + (rec.error.empty() ? "" : ": " + rec.error) +
                              (rec.reason.empty() ? "" : " (" + rec.reason + ")"), detail}, sink);
  memory_.restart_plan.clear();   // resolved without a restart: the watch ends with the job
}

// The node ledger learns from the watch: each host a decision blames is implicated (a host
// implicated k times is kept off later restarts and submits), and a job that completed clears
// its hosts.
void JobWatch::RecordInLedger(const WatchFinding& f, const Json& triage, int64_t now) {
  std::vector<LedgerEntry> entries;
  if (f.kind == "decision" && f.detail.contains("culprits")) {
    for (const Json& h : f.detail["culprits"])
      if (h.is_string())
        entries.push_back({now, h.get<std::string>(), target_, "implicated", f.detail.value("class", ""),
                           f.detail.value("action", "") + ": " + f.detail.value("reason", ""), "mt watch"});
  } else if (f.kind == "ended" && f.detail.value("status", "") == "completed") {
    const Json& job = triage.contains("job") ? triage["job"] : Json::object();
    const std::string nodelist = job.contains("nodelist") && job["nodelist"].is_string() ? job["nodelist"].get<std::string>() : "";
    std::vector<std::string> hosts;
    if (!nodelist.empty() && base::ExpandHostList(nodelist, &hosts))
      for (const std::string& h : hosts) entries.push_back({now, h, target_, "clean", "", "", "mt watch"});
  }
  if (entries.empty()) return;
  if (base::Status st = NodeLedger::ForWorkspace(env_.workspace).Append(entries); !st.ok())
    options_.warn("node ledger not updated: " + st.message());
}

// A restart plan for the attempt watched may exist without the memory knowing it (a watch
// killed between asking and saving, another watch of the chain): the store says.
void JobWatch::ProbeRestart() {
  if (probed_for_ != target_) {
    probed_for_ = target_;
    probe_id_ = RestartPlanId(env_.workspace, target_);
  }
  launch::approval::PlanRecord rec;
  if (probe_id_.empty() || !env_.approvals.Store().Get(probe_id_, launch::approval::UnixNow(), &rec).ok()) return;
  if (rec.state == "pending" || rec.state == "approved" || rec.state == "submitted") memory_.restart_plan = rec.id;
}

void JobWatch::AttributeFromTsdb(Json* triage) {
  // Only when a decision is near (a failure or a hang; a running job decides nothing) and
  // the attempt has metrics of its own: Prometheus starts on them, seconds, once per attempt.
  const std::string status = triage->value("status", ""), cls = triage->value("class", "");
  if (memory_.decided || (status == "running" && cls != "hang") || status == "completed" || !job_.has_tsdb) return;
  if (attributed_for_ != target_) {
    attributed_for_ = target_;
    attribution_ = nullptr;
    try {
      QueryTsdbInput in;
      in.job = target_;
      in.mode = "playbook";
      in.playbook = "auto";
      const QueryAnswer a = QueryTsdbAnswer(job_, in, DefaultTsdbManager(), {}, nullptr);
      Json culprits = Json::array();
      for (const auto& c : a.culprits.value_or(std::vector<QueryCulprit>{}))
        culprits.push_back({{"host", c.host}, {"family", c.family}, {"confidence", c.confidence}, {"metric", c.metric}});
      attribution_ = {{"family", a.family.value_or("unknown")}, {"culprits", culprits}};
    } catch (const std::exception& e) {
      options_.warn("no TSDB attribution for job " + target_ + ": " + e.what());
    }
  }
  if (!attribution_.is_null()) (*triage)["tsdb_attribution"] = attribution_;
}

bool JobWatch::Look(const Sink& sink) {
  const int64_t now = launch::approval::UnixNow();
  bool finished = false;
  if (memory_.restart_plan.empty()) ProbeRestart();
  if (!memory_.restart_plan.empty()) FollowRestart(now, sink);
  if (!job_.log.empty()) {
    // Triaged even while a restart waits for a human: a job that recovers or completes
    // meanwhile is reported, and its restart is no longer needed.
    Json args = {{"job", target_}, {"now", launch::approval::IsoUtc(now)}};
    Json triage = TriageLogStructured(job_, args);
    AttributeFromTsdb(&triage);
    const std::string state = BackendState();
    WatchTick tick = Observe(memory_, target_, state, triage, options_.rules);
    for (const WatchFinding& f : tick.findings) {
      Report(now, f, sink);
      RecordInLedger(f, triage, now);
      if (f.kind == "decision") {
        Json ev = {{"event", "watch_decision"}, {"job", target_}, {"chain", id_}, {"detail", f.detail}};
        if (base::Status st = env_.approvals.Audit().Append(ev); !st.ok()) options_.warn("decision not audited: " + st.message());
      }
    }
    if (tick.decision && tick.decision->action == "restart" && memory_.restart_plan.empty()) AskRestart(*tick.decision, now, sink);
    const bool completed = triage.value("status", "") == "completed" || state.rfind("COMPLETED", 0) == 0;
    if (tick.finished && completed && !memory_.restart_plan.empty()) {
      Report(now, {"restart", "job " + target_ + " completed: restart plan " + memory_.restart_plan + " is not needed (mt deny " +
                                  memory_.restart_plan + "; approving it would be refused)",
                   {{"state", "not_needed"}, {"plan_id", memory_.restart_plan}}}, sink);
      memory_.restart_plan.clear();
    }
    finished = tick.finished && memory_.restart_plan.empty();
  } else {
    Follow(target_);   // the restart's log appears when its job starts
    const std::string state = job_.log.empty() ? BackendState() : "";
    if (memory_.restart_plan.empty() && !state.empty() && state != "RUNNING" && state != "PENDING" && state != "UNKNOWN" &&
        state.rfind("CONFIGURING", 0) != 0) {
      // Ended without ever writing its log (cancelled while pending, a boot failure).
      Report(now, {"ended", "job " + target_ + " ended as " + state + " without a log", {{"status", state}, {"class", ""}}}, sink);
      finished = true;
    }
  }
  // The memory first: delivery may take a while, and a watch killed during it must not find
  // again what is already in the outbox.
  if (base::Status st = base::WriteFileAtomic(dir_ / "memory.json", memory_.ToJson().dump() + "\n"); !st.ok())
    options_.warn("memory not saved: " + st.message());
  for (const Webhook& hook : env_.webhooks) {
    int delivered = 0;
    if (base::Status st = outbox_.Deliver(hook, &delivered); !st.ok()) options_.warn(st.message());
  }
  return finished;
}

}  // namespace mt::tools
