// mt approve ID / mt deny ID / mt approvals: the host side of the approval gate. Run by a
// local user at a terminal, they act with the approver role: the plan is shown in full and
// confirmed on the terminal (--yes skips the question, for scripts a human runs).
#include <pwd.h>
#include <unistd.h>

#include <iostream>

#include "tools/gate/approval_gate.h"
#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/catalog/config.h"

namespace mt::tools::cli {
namespace approval = launch::approval;

namespace {

Actor LocalUser() {
  const passwd* pw = getpwuid(getuid());
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  return Actor{"user:" + std::string(pw ? pw->pw_name : std::to_string(getuid())) + "@" + host, "approver"};
}

int Decision(const std::vector<std::string>& args, bool approve) {
  const char* name = approve ? "approve" : "deny";
  Flags flags(args, {"workspace", "config", "reason"}, {"yes", "json"});
  if (!flags.ok() || flags.positional().size() != 1) {
    std::cerr << "mt " << name << ": " << (flags.ok() ? "exactly one plan id is required" : flags.error())
              << "\nusage: mt " << name << " PLAN_ID [--yes] [--json] [--reason TEXT] [--workspace DIR] [--config FILE]\n";
    return kExitUsage;
  }
  ApprovalEnv env;
  try {
    env = ApprovalEnvFrom(ResolveConfig(flags.value("config"), flags.value("workspace")));
  } catch (const std::exception& e) {
    std::cerr << "mt " << name << ": " << e.what() << "\n";
    return kExitFailed;
  }
  const std::string id = flags.positional()[0];
  const Actor me = LocalUser();
  approval::PlanRecord rec;
  if (!approval::ValidPlanId(id)) {
    std::cerr << "mt " << name << ": " << Refuse(env, name, id, me, "'" + id + "' is not a plan id (32 hex digits)") << "\n";
    return kExitFailed;
  }
  if (const base::Status st = env.Store().Get(id, approval::UnixNow(), &rec); !st.ok()) {
    std::cerr << "mt " << name << ": " << Refuse(env, name, id, me, st.message()) << "\n";
    return kExitFailed;
  }
  if (rec.state != "pending") {
    std::cerr << "mt " << name << ": " << Refuse(env, name, id, me, "plan " + id + " is " + rec.state + ", not pending") << "\n";
    return kExitFailed;
  }
  if (!flags.has("yes")) {
    std::cerr << "Plan " << rec.id << " (" << rec.kind << "), requested by " << rec.requester << " (" << rec.requester_role
              << ") at " << approval::IsoUtc(rec.created) << ", expires " << approval::IsoUtc(rec.expires) << "\n"
              << rec.summary;
    if (!isatty(STDIN_FILENO)) {
      std::cerr << "mt " << name << ": no terminal to confirm on and no --yes; nothing was decided\n";
      return kExitFailed;
    }
    std::cerr << (approve ? "Approve and run this plan? [y/N] " : "Deny this plan? [y/N] ") << std::flush;
    std::string answer;
    std::getline(std::cin, answer);
    if (answer != "y" && answer != "Y" && answer != "yes") {
      std::cerr << "mt " << name << ": not confirmed; nothing was decided\n";
      return kExitFailed;
    }
  }
  // The decision binds to the hash shown above: a plan changed since then is refused.
  std::string err = Decide(env, id, rec.hash, approve, me, "terminal", flags.value("reason").value_or(""), &rec);
  if (flags.has("json") && (err.empty() || rec.state == "failed")) std::cout << mcp::Encode(RecordView(rec)).dump() << "\n";
  if (!err.empty()) {
    std::cerr << "mt " << name << ": " << err << "\n";
    return kExitFailed;
  }
  if (!flags.has("json")) std::cout << RecordText(rec) << "\n";
  return kExitOk;
}

}  // namespace

int RunApprove(const std::vector<std::string>& args) { return Decision(args, true); }
int RunDeny(const std::vector<std::string>& args) { return Decision(args, false); }

int RunApprovals(const std::vector<std::string>& args) {
  Flags flags(args, {"workspace", "config"}, {"all", "json"});
  if (!flags.ok() || !flags.positional().empty()) {
    std::cerr << "mt approvals: " << (flags.ok() ? "unexpected argument " + flags.positional()[0] : flags.error())
              << "\nusage: mt approvals [--all] [--json] [--workspace DIR] [--config FILE]\n";
    return kExitUsage;
  }
  ApprovalEnv env;
  try {
    env = ApprovalEnvFrom(ResolveConfig(flags.value("config"), flags.value("workspace")));
  } catch (const std::exception& e) {
    std::cerr << "mt approvals: " << e.what() << "\n";
    return kExitFailed;
  }
  Json list = Json::array();
  std::string text;
  for (const auto& r : env.Store().List(approval::UnixNow())) {
    if (!flags.has("all") && r.state != "pending") continue;
    list.push_back(mcp::Encode(RecordView(r)));
    text += r.id + "  " + r.state + "  " + r.kind + "  by " + r.requester + " (" + r.requester_role + ")  expires " +
            approval::IsoUtc(r.expires) + (r.job_id.empty() ? "" : "  job " + r.job_id) + "\n" + r.summary + "\n";
  }
  if (flags.has("json")) {
    std::cout << Json{{"plans", list}}.dump() << "\n";
  } else {
    std::cout << (text.empty() ? std::string(flags.has("all") ? "no plans\n" : "no pending plans\n") : text);
  }
  return kExitOk;
}

}  // namespace mt::tools::cli
