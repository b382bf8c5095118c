// mt watch JOB: follows a running job until it ends. Each look (every --interval seconds)
// reads the scheduler's state (jobs mt submitted) and triages the log at that moment, then
// tools/supervise/watch_rules.h says what changed: the state, a hang (no completed step for
// --hang-seconds), throughput degradation, the end, and the decision (restart / stop /
// continue) with its reason. Every finding is appended to the job's outbox
// (<workspace>/.mt/watch/<job>/outbox.jsonl), the decisions to the audit log, and the outbox
// is delivered to mt.yaml's notifications.webhooks; the watch's memory is saved after each
// look, so a restarted watch neither repeats a finding nor resends a notice.
//
// Not built yet: acting on a restart decision (cancel, exclude the culprits, resubmit from
// the checkpoint through the approval gate). The decision is reported and audited; the job
// is left as it is.
//   mt watch JOB|LOG [--interval S] [--hang-seconds S] [--degrade-pct P] [--timeout S] [--once] [--json]
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>

#include "base/atomic_file.h"
#include "base/sha256.h"
#include "launcher/approval/audit.h"
#include "launcher/launch/submit.h"
#include "tools/catalog/config.h"
#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/logs/triage.h"
#include "tools/logs/workspace.h"
#include "tools/supervise/notifier.h"
#include "tools/supervise/watch_rules.h"

namespace mt::tools::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage =
    "usage: mt watch JOB|LOG [--interval S] [--hang-seconds S] [--degrade-pct P] [--timeout S] [--once] [--json]\n"
    "                [--workspace DIR] [--config FILE]\n";

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

// One look: findings to the outbox (and stdout), decisions to the audit log, the memory saved.
bool Look(const WatchSetup& s, WatchMemory& memory, Outbox& outbox) {
  int64_t now = launch::approval::UnixNow();
  Json args = {{"job", s.target}, {"now", launch::approval::IsoUtc(now)}};
  Json triage = TriageLogStructured(s.job, args);
  WatchTick tick = Observe(memory, s.id, BackendState(s), triage, s.rules);
  launch::approval::AuditLog audit(s.config.AuditLogPath());
  for (const WatchFinding& f : tick.findings) {
    Notice n{"", now, s.id, f.kind, f.text, f.detail};
    if (base::Status st = outbox.Add(n); !st.ok()) std::cerr << "mt watch: notice not recorded: " << st.message() << "\n";
    if (f.kind == "decision") {
      Json ev = {{"event", "watch_decision"}, {"job", s.id}, {"detail", f.detail}};
      if (base::Status st = audit.Append(ev); !st.ok()) std::cerr << "mt watch: decision not audited: " << st.message() << "\n";
    }
    if (s.json) std::cout << Json{{"time", launch::approval::IsoUtc(now)}, {"kind", f.kind}, {"text", f.text}, {"detail", f.detail}}.dump() << "\n";
    else std::cout << launch::approval::IsoUtc(now) << "  " << s.id << "  " << f.kind << ": " << f.text << "\n";
  }
  if (tick.decision && tick.decision->action == "restart")
    std::cout << (s.json ? "" : "  (restart decided; restarting through the approval gate is not built yet: the job is left as it is)\n");
  std::cout.flush();
  // The memory first: delivery may take a while, and a watch killed during it must not find
  // again what is already in the outbox.
  if (base::Status st = base::WriteFileAtomic(s.dir / "memory.json", memory.ToJson().dump() + "\n"); !st.ok())
    std::cerr << "mt watch: memory not saved: " << st.message() << "\n";
  for (const Webhook& hook : s.config.webhooks) {
    int delivered = 0;
    if (base::Status st = outbox.Deliver(hook, &delivered); !st.ok()) std::cerr << "mt watch: " << st.message() << "\n";
  }
  return tick.finished;
}

}  // namespace

int RunWatch(const std::vector<std::string>& args) {
  Flags flags(args, {"workspace", "config", "interval", "hang-seconds", "degrade-pct", "timeout"}, {"once", "json"});
  if (!flags.ok()) return Usage(flags.error());
  if (flags.positional().size() != 1) return Usage("exactly one JOB or LOG is required");
  WatchSetup s;
  if (!NumberFlag(flags, "interval", 1, 3600, &s.interval) || !NumberFlag(flags, "hang-seconds", 1, 604800, &s.rules.hang_seconds) ||
      !NumberFlag(flags, "degrade-pct", 1, 99, &s.rules.degrade_pct) || !NumberFlag(flags, "timeout", 1, 30 * 86400, &s.timeout))
    return kExitUsage;
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
