#include "tools/logs/triage_status.h"

#include <vector>

namespace mt::tools {

JobStatus DecideStatus(const StatusFacts& f) {
  JobStatus s;
  const LogScan& ps = f.log;
  const JobSummary& sum = ps.summary;
  const Lifecycle& life = f.life;
  if (sum.present) {
    if (sum.status == "SUCCESS") s.status = "completed";
    else if (f.finished_all) {
      s.status = "completed";
      s.soft_success = true;
    } else if (f.summary_cancel) s.status = "cancelled";
    else s.status = "failed";
  } else if (life.end_source == "launcher_end_line") {
    // The launcher's own end line: its exit code decides; without one, the evidence does.
    // Exit 0 is not proof: a wrapper's code is often its own (`…; echo "exit code $?"` after
    // a pipe, a runner that stops on an error and exits cleanly). Fatal evidence after which
    // the training neither progressed nor finished outweighs it.
    const bool ok = life.exit_code ? *life.exit_code == 0 && (life.training_finished || !f.fatal_present)
                                   : (life.training_finished || !f.fatal_present);
    s.status = ok || f.finished_all ? "completed" : "failed";
    s.soft_success = !ok && f.finished_all;
  } else if (!ps.slurm_ends.empty()) {
    s.status = f.finished_all ? "completed" : ps.slurm_ends.back().reason == "NODE FAILURE" ? "failed" : "cancelled";
    s.soft_success = f.finished_all;
  } else if (ps.lines == 0) {
    s.status = "unknown";
  } else if (f.fatal_present) {
    s.status = life.training_finished ? "completed" : "failed";
    s.soft_success = life.training_finished;
  } else if (life.training_finished) {
    s.status = "completed";
  } else if (life.end_source == "srun_task_exit") {
    s.status = "failed";
  } else if (f.progress.stalled) {
    s.status = "hang";
  } else if (f.clock.source == "none") {
    s.status = "unknown";
    s.undecided = "the log has no time stamps and its mtime is after `now`, so silence cannot be measured: "
                  "running and hung look the same. Pass the time the log was copied as `now`, or read the live "
                  "log (its mtime) or the job's TSDB (last step time) to decide";
  } else {
    s.status = "running";
  }
  return s;
}

Verdict DecideClass(JobStatus* st, const Candidates& cands, const std::string& primary, const Lifecycle& life,
                    bool hang_before_heartbeat) {
  Verdict v;
  if (st->status == "completed") {
    v.cls = "completed";
    v.rule = life.ended ? "the job ended successfully (" + life.end_source + ")" : "the training loop reached its end";
    return v;
  }
  std::vector<std::string> skip;
  if (hang_before_heartbeat) skip = {"heartbeat", "heartbeat_false_positive"};
  if (st->status == "running") skip.push_back("hang");
  RootCause rc = PickRootCause(cands, primary, skip);
  v.cls = rc.cls;
  v.rule = rc.rule;
  if (v.cls.empty()) {
    const std::string& s = st->status;
    v.cls = s == "running" ? "running" : s == "hang" ? "hang" : s == "cancelled" ? "cancelled" : "unknown";
    v.rule = "no fatal evidence in the log: the class is the job's status";
    if (v.cls == "unknown" && st->undecided.empty())
      st->undecided = s == "failed" ? "the job ended with a failure but the log names no cause: read the rank logs "
                                      "(read_log) or the job's TSDB around its end"
                                    : "the log holds no evidence of how the job went";
  }
  if (v.cls == "running" && st->status != "running") st->status = "running";
  return v;
}

}  // namespace mt::tools
