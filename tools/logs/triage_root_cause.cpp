#include "tools/logs/triage_root_cause.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace mt::tools {

const std::vector<std::string>& ClassPriority() {
  static const std::vector<std::string> order = {
      "prolog_kill", "model_not_found", "patch_branch_fail", "container_pull_fail",
      "container_load_fail", "no_gpu", "port_fail", "nccl_nic_fail", "stage_timeout",
      "xla_compile_fail", "oom", "host_oom", "gpu_hw_error", "nic_error",
      "checkpoint_fs_error", "node_fail", "nccl_error", "coordination_timeout",
      "heartbeat_false_positive", "heartbeat", "signal_kill", "actor_fail",
      "subprocess_fail", "python_exception", "hang", "preempted", "time_limit",
      "stage_fail", "cancelled"};
  return order;
}

bool IsPostMortemCause(const std::string& cls) {
  static const std::set<std::string> causes = {
      "prolog_kill", "model_not_found", "patch_branch_fail", "container_pull_fail", "container_load_fail",
      "no_gpu", "port_fail", "nccl_nic_fail", "stage_timeout", "xla_compile_fail", "oom", "host_oom",
      "gpu_hw_error", "nic_error", "checkpoint_fs_error", "node_fail"};
  return causes.count(cls) > 0;
}

const char* RootCauseRuleText() {
  return "memory, hardware, lost-node and launcher-stage causes explain everything else whatever their order "
         "(their reports can arrive after the consequences); otherwise the first fatal event in the log explains "
         "the ones after it (a traceback whose exception names another class counts as that class); silence "
         "after the end evidence is expected, not a hang";
}

namespace {

int Rank(const std::string& cls) {
  const auto& p = ClassPriority();
  auto it = std::find(p.begin(), p.end(), cls);
  return it == p.end() ? static_cast<int>(p.size()) : static_cast<int>(it - p.begin());
}

// Whether `a` comes before `b`: by line in the primary log, by time across files; evidence
// elsewhere without a time ranks after the primary log's.
bool Before(const Ev& a, const Ev& b, const std::string& primary) {
  if (a.file == b.file) return a.ref.line < b.ref.line;
  if (a.ref.time != kNoTime && b.ref.time != kNoTime) return a.ref.time < b.ref.time;
  return a.file == primary;
}

const Ev* First(const Candidate& c, const std::string& primary) {
  const Ev* best = nullptr;
  for (const auto& e : c.evidence)
    if (!best || Before(e, *best, primary)) best = &e;
  return best;
}

// A lost node proves itself by the scheduler's or runtime's words; our own launcher's
// per-node nonzero exit is a consequence of whatever failed on that node.
//
// Likewise a bare SIGKILL ("task 0: Killed", the shell's "Killed"): the OOM killer's usual
// trace, but also what a cancellation or a time limit does to the tasks, so it explains
// only what comes after it; the kernel's or slurmstepd's own OOM report is proof.
bool ProvenPostMortem(const std::string& cls, const Candidate& c) {
  if (!IsPostMortemCause(cls)) return false;
  if (cls != "node_fail" && cls != "host_oom") return true;
  for (const auto& e : c.evidence)
    if (e.signature != "node_exit" && e.signature != "srun_task_exit" && e.signature != "srun_task_killed" &&
        e.signature != "killed" && e.signature != "sigkill")
      return true;
  return false;
}

bool AllEvidence(const Candidate& c, const char* signature) {
  for (const auto& e : c.evidence)
    if (e.signature != signature) return false;
  return !c.evidence.empty();
}

}  // namespace

bool LauncherReport(const std::string& signature) {
  return signature == "srun_task_exit" || signature == "srun_task_killed" || signature == "step_cancel_after_task_failure";
}

int ConsequenceTier(const std::string& cls, const Candidate& c) {
  if (cls == "stage_fail" || cls == "subprocess_fail") return 1;
  bool all_reports = !c.evidence.empty();
  for (const auto& e : c.evidence) all_reports &= LauncherReport(e.signature);
  if (all_reports) return 1;
  if (AllEvidence(c, "peer_lost")) return 2;
  return 0;
}

namespace {

// The job was ended from outside (scheduler, operator, preemption): if it had already stopped
// progressing, the silence is what went wrong.
bool EndedFromOutside(const std::string& cls) {
  return cls == "preempted" || cls == "time_limit" || cls == "cancelled" || cls == "stage_fail";
}

}  // namespace

RootCause PickRootCause(const Candidates& cands, const std::string& primary, const std::vector<std::string>& skip) {
  auto eligible = [&](const std::string& cls, const Candidate& c) {
    return c.terminal && std::find(skip.begin(), skip.end(), cls) == skip.end() && Rank(cls) < static_cast<int>(ClassPriority().size());
  };
  for (const auto& cls : ClassPriority()) {
    auto it = cands.find(cls);
    if (it != cands.end() && eligible(cls, it->second) && ProvenPostMortem(cls, it->second))
      return {cls, "cause: " + cls + " explains the other evidence whatever its order"};
  }
  // Silence is not an event with a line of its own: its evidence (the last progress) always
  // precedes the error that eventually ends a stuck job, and a collective or heartbeat
  // timeout is the more specific name for the same stop. It wins only over an end imposed
  // from outside, or when nothing else is there.
  const auto hang = cands.find("hang");
  const bool hang_ok = hang != cands.end() && eligible("hang", hang->second);
  auto first_of = [&](int tier) {
    std::pair<std::string, const Ev*> best{"", nullptr};
    for (const auto& [cls, c] : cands) {
      if (cls == "hang" || !eligible(cls, c) || ConsequenceTier(cls, c) != tier) continue;
      const Ev* e = First(c, primary);
      if (!e) continue;
      const Ev* b = best.second;
      bool earlier = !b || Before(*e, *b, primary);
      bool same = b && !Before(*e, *b, primary) && !Before(*b, *e, primary);
      if (earlier || (same && Rank(cls) < Rank(best.first))) best = {cls, e};
    }
    return best;
  };
  auto [best, best_ev] = first_of(0);
  if (hang_ok && (best.empty() || EndedFromOutside(best)))
    return {"hang", best.empty() ? "no fatal event: the job stopped progressing for longer than the hang threshold"
                                 : "the job had stopped progressing before it was ended from outside (" + best + ")"};
  if (!best.empty())
    return {best, "first fatal event: " + best + " at " + best_ev->file + ":" + std::to_string(best_ev->ref.line) +
                      " comes before the other evidence, which it explains"};
  std::tie(best, best_ev) = first_of(1);
  if (!best.empty())
    return {best, "no named cause: only the launcher's report that a " +
                      std::string(best == "stage_fail" ? "stage" : best == "subprocess_fail" ? "subprocess" : "task") +
                      " failed (" + best_ev->file + ":" + std::to_string(best_ev->ref.line) +
                      "); the peers' errors are its consequence"};
  std::tie(best, best_ev) = first_of(2);
  if (!best.empty())
    return {best, "only the peers' report that a collective lost its peer (" + best_ev->file + ":" +
                      std::to_string(best_ev->ref.line) + "); which rank died first and why is not in the log"};
  return {};
}

}  // namespace mt::tools
