// mt watch JOB: follows a running job until it ends, one look every --interval seconds
// (tools/catalog/job_watch.h: the state, a hang, degradation, the end, the decision, a
// restart through the approval gate as the requester mt-watch:USER@HOST with --role's policy,
// default supervisor). Findings are printed as they are recorded (--json: one object a line).
//   mt watch JOB|LOG [--interval S] [--hang-seconds S] [--startup-seconds S] [--degrade-pct P] [--max-restarts N]
//                    [--role R] [--timeout S] [--once] [--json]
#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "launcher/approval/audit.h"
#include "tools/catalog/config.h"
#include "tools/catalog/job_watch.h"
#include "tools/cli/command.h"
#include "tools/cli/flags.h"

namespace mt::tools::cli {
namespace {

constexpr const char* kUsage =
    "usage: mt watch JOB|LOG [--interval S] [--hang-seconds S] [--startup-seconds S] [--degrade-pct P] [--max-restarts N] [--role R]\n"
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

std::string LocalUser() {
  const passwd* pw = getpwuid(getuid());
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  return std::string(pw ? pw->pw_name : std::to_string(getuid())) + "@" + host;
}

}  // namespace

Flags WatchFlags(const std::vector<std::string>& args) {
  return Flags(args, {"workspace", "config", "interval", "hang-seconds", "startup-seconds", "degrade-pct", "max-restarts", "role", "timeout"},
               {"once", "json"});
}

int RunWatch(const std::vector<std::string>& args) {
  Flags flags = WatchFlags(args);
  if (!flags.ok()) return Usage(flags.error());
  if (flags.positional().size() != 1) return Usage("exactly one JOB or LOG is required");
  JobWatchOptions options;
  double interval = 30, timeout = 0, max_restarts = options.rules.policy.max_restarts;
  if (!NumberFlag(flags, "interval", 1, 3600, &interval) || !NumberFlag(flags, "hang-seconds", 1, 604800, &options.rules.hang_seconds) ||
      !NumberFlag(flags, "degrade-pct", 1, 99, &options.rules.degrade_pct) || !NumberFlag(flags, "timeout", 1, 30 * 86400, &timeout) ||
      !NumberFlag(flags, "max-restarts", 0, 100, &max_restarts) ||
      !NumberFlag(flags, "startup-seconds", 1, 604800, &options.rules.startup_seconds))
    return kExitUsage;
  options.rules.policy.max_restarts = static_cast<int>(max_restarts);
  const std::string role = flags.value("role").value_or("supervisor");
  if (role.empty() || role == "approver") return Usage("--role must name a policy role other than approver");
  options.requester = Actor{"mt-watch:" + LocalUser(), role};
  options.warn = [](const std::string& w) { std::cerr << "mt watch: " << w << "\n"; };
  const bool json = flags.has("json");
  std::unique_ptr<JobWatch> watch;
  try {
    const Config config = ResolveConfig(flags.value("config"), flags.value("workspace"));
    watch = std::make_unique<JobWatch>(JobWatchEnv{config.workspace, ApprovalEnvFrom(config), config.webhooks},
                                       flags.positional()[0], options);
  } catch (const std::exception& e) {
    std::cerr << "mt watch: " << e.what() << "\n";
    return kExitFailed;
  }
  auto print = [&](int64_t now, const WatchFinding& f) {
    const std::string time = launch::approval::IsoUtc(now);
    if (json) std::cout << Json{{"time", time}, {"kind", f.kind}, {"text", f.text}, {"detail", f.detail}}.dump() << "\n";
    else std::cout << time << "  " << watch->current_job() << "  " << f.kind << ": " << f.text << "\n";
    std::cout.flush();
  };
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    if (watch->Look(print) || flags.has("once")) return kExitOk;
    if (timeout > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= timeout) {
      std::cerr << "mt watch: --timeout reached; the job is still being watched by nobody\n";
      return kExitOk;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(interval * 1000)));
  }
}

}  // namespace mt::tools::cli
