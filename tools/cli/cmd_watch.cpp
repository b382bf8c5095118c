// mt watch JOB: follows a running job until it ends. Each look (every --interval seconds)
// reads the scheduler's state (jobs mt submitted) and triages the log at that moment, then
// tools/supervise/watch_rules.h says what changed: the state, a hang (no completed step for
// --hang-seconds), throughput degradation, the end, and the decision (restart / stop /
// continue) with its reason. Every finding is appended to the job's outbox
// (<workspace>/.mt/watch/<job>/outbox.jsonl), the decisions to the audit log, and the outbox
// is delivered to mt.yaml's notifications.webhooks; the watch's memory is saved after each
// look, so a restarted watch neither repeats a finding nor resends a notice.
//
// A restart decision on a job mt submitted becomes a restart plan through the approval gate
// (tools/gate/restart_request.h): run at once when mt.yaml's policy for the watch's role
// (--role, default supervisor) allows it, else pending until a human approves it. Once it is
// submitted the watch follows the new job; the chain keeps its earlier attempts, so the same
// failure at the same step twice stops it.
//   mt watch JOB|LOG [--interval S] [--hang-seconds S] [--degrade-pct P] [--max-restarts N]
//                    [--role R] [--timeout S] [--once] [--json]
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>

#include "base/atomic_file.h"
#include "base/hostlist.h"
#include "base/sha256.h"
#include "launcher/approval/audit.h"
#include "launcher/launch/submit.h"
#include "tools/catalog/config.h"
#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/logs/triage.h"
#include "tools/logs/workspace.h"
#include "tools/gate/restart_request.h"
#include "tools/supervise/node_ledger.h"
#include "tools/supervise/notifier.h"
#include "tools/supervise/watch_rules.h"

namespace mt::tools::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage =
    "usage: mt watch JOB|LOG [--interval S] [--hang-seconds S] [--degrade-pct P] [--max-restarts N] [--role R]\n"
    "                [--timeout S] [--once] [--json] [--workspace DIR] [--config FILE]\n";

int Usage(const std::string& why) {
  std::cerr << "mt watch: " << why << "\n" << kUsage;
  return kExitUsage;
}

bool NumberFlag(const Flags& f, const std::string& name, double lo, double hi, double* out) {
  auto v = f.value(name);
  if (!v) return true;
  try {
    size_t used = 0;
    double d = std::stod(*v, &used);
    if (used != v->size() || d < lo || d > hi) throw std::invalid_argument(*v);
    *out = d;
    return true;
  } catch (const std::exception&) {
    Usage("--" + name + " needs a number from " + std::to_string(static_cast<int64_t>(lo)) + " to " +
          std::to_string(static_cast<int64_t>(hi)) + ", got '" + *v + "'");
    return false;
  }
}

struct WatchSetup {
  Config config;
  JobFiles job;
  std::string target, id;
  fs::path dir;                       // <workspace>/.mt/watch/<id>
  WatchConfig rules;
  double interval = 30, timeout = 0;
  bool once = false, json = false;
  std::string role = "supervisor";
};

WatchMemory LoadMemory(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return {};
  try {
    return WatchMemory::FromJson(Json::parse(in));
  } catch (const std::exception&) {
    return {};
  }
}

std::string BackendState(const WatchSetup& s) {
  nlohmann::json st;
  if (!launch::JobStatus(s.config.workspace, s.target, &st).ok()) return "";   // not a job mt submitted
  return st.value("state", "");
}

void Report(const WatchSetup& s, Outbox& outbox, int64_t now, const WatchFinding& f) {
  Notice n{"", now, s.id, f.kind, f.text, f.detail};
  if (base::Status st = outbox.Add(n); !st.ok()) std::cerr << "mt watch: notice not recorded: " << st.message() << "\n";
  if (s.json) std::cout << Json{{"time", launch::approval::IsoUtc(now)}, {"kind", f.kind}, {"text", f.text}, {"detail", f.detail}}.dump() << "\n";
  else std::cout << launch::approval::IsoUtc(now) << "  " << s.id << "  " << f.kind << ": " << f.text << "\n";
}

Actor Supervisor(const WatchSetup& s) {
  const passwd* pw = getpwuid(getuid());
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  return Actor{"mt-watch:" + std::string(pw ? pw->pw_name : std::to_string(getuid())) + "@" + host, s.role};
}

// Points the watch at attempt `job` (a restart's job): its log may not exist yet (a Slurm
// job still pending), and then triage waits for the next look.
void Follow(WatchSetup& s, const std::string& job) {
  s.target = job;
  try {
    s.job = Workspace(s.config.workspace).Resolve(job);
  } catch (const std::exception&) {
    s.job = JobFiles{};
  }
}

// A restart decision: the restart plan through the gate (once), with the repeat offenders of
// the node ledger added to the decision's exclusions.
void AskRestart(const WatchSetup& s, WatchMemory& memory, const Decision& d, Outbox& outbox, int64_t now) {
  Json probe;
  if (!launch::JobStatus(s.config.workspace, s.target, &probe).ok()) {
    Report(s, outbox, now, {"restart", "restart decided, but " + s.target + " was not submitted by mt here: there is no plan to "
                                       "resubmit; restart it by hand", {{"state", "unavailable"}}});
    return;
  }
  RestartRequest r{s.target, memory.restarts + 1, d.exclude, d.resume_step, d.reason};
  std::vector<std::string> offenders;
  if (NodeLedger::ForWorkspace(s.config.workspace).Excluded(OffenderRule{}, now, &offenders).ok())
    r.exclude.insert(r.exclude.end(), offenders.begin(), offenders.end());
  const ApprovalEnv env = ApprovalEnvFrom(s.config);
  launch::approval::PlanRecord rec;
  RestartOutcome outcome;
  std::string err = RequestRestart(env, r, Supervisor(s), &rec, &outcome);
  if (!outcome.exclusion_note.empty()) std::cerr << "mt watch: restart of " << s.target << ": " << outcome.exclusion_note << "\n";
  if (rec.id.empty()) {
    Report(s, outbox, now, {"restart", "restart of " + s.target + " not requested: " + err, {{"state", "error"}, {"error", err}}});
    return;
  }
  memory.restart_plan = rec.id;
  if (!err.empty()) std::cerr << "mt watch: restart plan " << rec.id << ": " << err << "\n";
  if (rec.state == "pending") {
    memory.restart_state = "pending";
    Report(s, outbox, now, {"restart", "restart plan " + rec.id + " waits for a human: mt approve " + rec.id + " (" + outcome.policy + ")",
                            {{"state", "pending_approval"}, {"plan_id", rec.id}, {"policy", outcome.policy},
                             {"exclusion_note", outcome.exclusion_note},
                             {"how_to_approve", {"mt approve " + rec.id, "the /approvals page of mt serve --http"}}}});
  }
}

// The restart plan's progress: submitted (the watch follows the new job), or refused.
void FollowRestart(WatchSetup& s, WatchMemory& memory, Outbox& outbox, int64_t now) {
  launch::approval::PlanRecord rec;
  if (!ApprovalEnvFrom(s.config).Store().Get(memory.restart_plan, now, &rec).ok()) return;
  if (rec.state == memory.restart_state || rec.state == "pending" || rec.state == "approved") return;
  memory.restart_state = rec.state;
  Json detail = {{"state", rec.state}, {"plan_id", rec.id}, {"approver", rec.approver}, {"via", rec.via}};
  if (rec.state == "submitted") {
    detail["job"] = rec.job_id;
    detail["parent_job"] = s.target;
    Report(s, outbox, now, {"restart", "restarted " + s.target + " as job " + rec.job_id + " (plan " + rec.id + ", approved by " +
                                           rec.approver + " via " + rec.via + ")", detail});
    memory.StartAttempt(rec.job_id);
    Follow(s, rec.job_id);
    return;
  }
  detail["error"] = rec.error;
  Report(s, outbox, now, {"restart", "restart plan " + rec.id + " " + rec.state + (rec.error.empty() ? "" : ": " + rec.error) +
                                         (rec.reason.empty() ? "" : " (" + rec.reason + ")"), detail});
  memory.restart_plan.clear();   // resolved without a restart: the watch ends with the job
}

// The node ledger learns from the watch: each host a decision blames is implicated (a host
// implicated k times is kept off later restarts and submits), and a job that completed clears
// its hosts.
void RecordInLedger(const WatchSetup& s, const WatchFinding& f, const Json& triage, int64_t now) {
  std::vector<LedgerEntry> entries;
  if (f.kind == "decision" && f.detail.contains("culprits")) {
    for (const Json& h : f.detail["culprits"])
      entries.push_back({now, h.get<std::string>(), s.target, "implicated", f.detail.value("class", ""),
                         f.detail.value("action", "") + ": " + f.detail.value("reason", ""), "mt watch"});
  } else if (f.kind == "ended" && f.detail.value("status", "") == "completed") {
    const Json& job = triage.contains("job") ? triage["job"] : Json::object();
    const std::string nodelist = job.contains("nodelist") && job["nodelist"].is_string() ? job["nodelist"].get<std::string>() : "";
    std::vector<std::string> hosts;
    if (!nodelist.empty() && base::ExpandHostList(nodelist, &hosts))
      for (const std::string& h : hosts) entries.push_back({now, h, s.target, "clean", "", "", "mt watch"});
  }
  if (entries.empty()) return;
  if (base::Status st = NodeLedger::ForWorkspace(s.config.workspace).Append(entries); !st.ok())
    std::cerr << "mt watch: node ledger not updated: " << st.message() << "\n";
}

// One look: findings to the outbox (and stdout), decisions to the audit log, a restart
// through the gate, the memory saved. True when the watch is over.
bool Look(WatchSetup& s, WatchMemory& memory, Outbox& outbox) {
  int64_t now = launch::approval::UnixNow();
  bool finished = false;
  if (!memory.restart_plan.empty()) FollowRestart(s, memory, outbox, now);
  if (memory.restart_plan.empty() && !s.job.log.empty()) {
    Json args = {{"job", s.target}, {"now", launch::approval::IsoUtc(now)}};
    Json triage = TriageLogStructured(s.job, args);
    WatchTick tick = Observe(memory, s.target, BackendState(s), triage, s.rules);
    launch::approval::AuditLog audit(s.config.AuditLogPath());
    for (const WatchFinding& f : tick.findings) {
      Report(s, outbox, now, f);
      RecordInLedger(s, f, triage, now);
      if (f.kind == "decision") {
        Json ev = {{"event", "watch_decision"}, {"job", s.target}, {"chain", s.id}, {"detail", f.detail}};
        if (base::Status st = audit.Append(ev); !st.ok()) std::cerr << "mt watch: decision not audited: " << st.message() << "\n";
      }
    }
    if (tick.decision && tick.decision->action == "restart") AskRestart(s, memory, *tick.decision, outbox, now);
    finished = tick.finished && memory.restart_plan.empty();
  } else if (s.job.log.empty()) {
    Follow(s, s.target);   // the restart's log appears when its job starts
  }
  std::cout.flush();
  // The memory first: delivery may take a while, and a watch killed during it must not find
  // again what is already in the outbox.
  if (base::Status st = base::WriteFileAtomic(s.dir / "memory.json", memory.ToJson().dump() + "\n"); !st.ok())
    std::cerr << "mt watch: memory not saved: " << st.message() << "\n";
  for (const Webhook& hook : s.config.webhooks) {
    int delivered = 0;
    if (base::Status st = outbox.Deliver(hook, &delivered); !st.ok()) std::cerr << "mt watch: " << st.message() << "\n";
  }
  return finished;
}

}  // namespace

int RunWatch(const std::vector<std::string>& args) {
  Flags flags(args, {"workspace", "config", "interval", "hang-seconds", "degrade-pct", "max-restarts", "role", "timeout"},
              {"once", "json"});
  if (!flags.ok()) return Usage(flags.error());
  if (flags.positional().size() != 1) return Usage("exactly one JOB or LOG is required");
  WatchSetup s;
  if (!NumberFlag(flags, "interval", 1, 3600, &s.interval) || !NumberFlag(flags, "hang-seconds", 1, 604800, &s.rules.hang_seconds) ||
      !NumberFlag(flags, "degrade-pct", 1, 99, &s.rules.degrade_pct) || !NumberFlag(flags, "timeout", 1, 30 * 86400, &s.timeout))
    return kExitUsage;
  double max_restarts = s.rules.policy.max_restarts;
  if (!NumberFlag(flags, "max-restarts", 0, 100, &max_restarts)) return kExitUsage;
  s.rules.policy.max_restarts = static_cast<int>(max_restarts);
  s.role = flags.value("role").value_or("supervisor");
  if (s.role.empty() || s.role == "approver") return Usage("--role must name a policy role other than approver");
  s.once = flags.has("once");
  s.json = flags.has("json");
  s.target = flags.positional()[0];
  try {
    s.config = ResolveConfig(flags.value("config"), flags.value("workspace"));
    struct stat st {};
    s.job = ::stat(s.target.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? DescribeLogFile(s.target) : Workspace(s.config.workspace).Resolve(s.target);
  } catch (const std::exception& e) {
    std::cerr << "mt watch: " << e.what() << "\n";
    return kExitFailed;
  }
  s.id = !s.job.id.empty() ? s.job.id : s.job.log.stem().string();
  // A log given by path is kept apart from another log of the same name elsewhere.
  std::string key = s.id;
  if (s.job.id.empty()) key += "-" + base::Sha256Hex(fs::absolute(s.job.log).lexically_normal().string()).substr(0, 12);
  s.dir = s.config.workspace / ".mt" / "watch" / key;
  std::error_code ec;
  fs::create_directories(s.dir, ec);
  if (ec) {
    std::cerr << "mt watch: cannot create " << s.dir.string() << ": " << ec.message() << "\n";
    return kExitFailed;
  }
  WatchMemory memory = LoadMemory(s.dir / "memory.json");
  if (!memory.job.empty() && memory.job != s.target) Follow(s, memory.job);   // the chain's newest attempt
  Outbox outbox(s.dir);
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    if (Look(s, memory, outbox) || s.once) return kExitOk;
    if (s.timeout > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= s.timeout) {
      std::cerr << "mt watch: --timeout reached; the job is still being watched by nobody\n";
      return kExitOk;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(s.interval * 1000)));
  }
}

}  // namespace mt::tools::cli
