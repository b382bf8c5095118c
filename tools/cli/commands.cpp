#include "tools/cli/command.h"

namespace mt::tools::cli {

int RunServe(const std::vector<std::string>& args);
int RunJobs(const std::vector<std::string>& args);
int RunTriage(const std::vector<std::string>& args);
int RunLog(const std::vector<std::string>& args);
int RunDemo(const std::vector<std::string>& args);
int RunSubmit(const std::vector<std::string>& args);
int RunStatus(const std::vector<std::string>& args);
int RunCancel(const std::vector<std::string>& args);
int RunQuery(const std::vector<std::string>& args);
int RunReference(const std::vector<std::string>& args);
int RunSweep(const std::vector<std::string>& args);
int RunNodes(const std::vector<std::string>& args);
int RunTrace(const std::vector<std::string>& args);
int RunWatch(const std::vector<std::string>& args);
int RunPerf(const std::vector<std::string>& args);
int RunCompare(const std::vector<std::string>& args);
int RunApprove(const std::vector<std::string>& args);
int RunDeny(const std::vector<std::string>& args);
int RunApprovals(const std::vector<std::string>& args);

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = {
      {"serve", "mt serve [--stdio] [--http ADDR] [--workspace DIR] [--config FILE]",
       "run the MCP server (stdio by default)", RunServe},
      {"jobs", "mt jobs [--workspace DIR] [--status S] [--limit N] [--now ISO-8601] [--json]", "list the jobs in the workspace", RunJobs},
      {"triage", "mt triage JOB|LOG [--workspace DIR] [--now ISO-8601] [--detail full] [--json]", "why a job stopped, or whether it is healthy (triage_log)", RunTriage},
      {"log", "mt log JOB [--lines A:B] [--rank R] [--grep RE] [--context N] [--json]", "a bounded window of a job log (read_log)", RunLog},
      {"query", "mt query JOB [--workspace DIR] (--discover | --promql Q [--start T --end T --step S] | --playbook NAME|auto | --correlate TIME|STEP) [--json]", "evidence from the job's Prometheus TSDB (query_tsdb)", RunQuery},
      {"perf", "mt perf JOB [--workspace DIR] [--warmup-steps N] [--gpu NAME] [--dtype bf16|fp8] [--no-report] [--json]", "steady-state TGS, MFU, step time, phases and an HTML report (perf_analysis)", RunPerf},
      {"compare", "mt compare A B [C...] [--workspace DIR] [--warmup-steps N] [--no-tsdb] [--json]", "why is B slower than A: config, steady TGS, TSDB contention, log events (compare_jobs)", RunCompare},
      {"demo", "mt demo init DIR | mt demo [--workspace DIR]",
       "the case-study workspace; the end-to-end demo over a real MCP session", RunDemo},
      {"submit", "mt submit MODEL[[:alias]:tag] [--backend local|slurm|k8s] [--observe] [-N n] [sched args] [--dry-run] [--json] [--yes] [--supervise] [-- passthrough]", "plan a job, confirm it and submit it (launcher); --supervise then watches it (mt watch)", RunSubmit},
      {"status", "mt status JOB [--workspace DIR] [--json]", "the scheduler's state of a job mt submitted", RunStatus},
      {"cancel", "mt cancel JOB [--workspace DIR] [--json]", "cancel a job mt submitted", RunCancel},
      {"approve", "mt approve PLAN_ID [--yes] [--json] [--workspace DIR] [--config FILE]", "show a pending plan, confirm, approve and run it (approval gate)", RunApprove},
      {"deny", "mt deny PLAN_ID [--reason TEXT] [--yes] [--json] [--workspace DIR] [--config FILE]", "deny a pending plan (approval gate)", RunDeny},
      {"approvals", "mt approvals [--all] [--json] [--workspace DIR] [--config FILE]", "list plans waiting for approval (--all: every plan)", RunApprovals},
      {"sweep", "mt sweep --spec FILE [--state NAME=DIR]... [--baseline FILE] [--write-baseline FILE] [--markdown FILE] [--junit FILE] [--threshold PCT]", "CI regression sweep: steady TGS per model and node count vs a baseline (markdown, JUnit)", RunSweep},
      {"nodes", "mt nodes [--k N] [--window-days D] [--json] | mt nodes implicate HOST --job JOB --class CLASS [--evidence TEXT] | mt nodes clean HOST --job JOB", "the node ledger: hosts implicated in failures across jobs, repeat offenders to exclude", RunNodes},
      {"watch", "mt watch JOB|LOG [--interval S] [--hang-seconds S] [--startup-seconds S] [--degrade-pct P] [--max-restarts N] [--role R] [--timeout S] [--once] [--json]", "follow a running job: state, hang, degradation, end, and the restart / stop decision, notified to mt.yaml's webhooks; a restart goes through the approval gate and the watch follows the new job", RunWatch},
      {"trace", "mt trace PATH... [--base PATH...] [--json]", "profiler traces: step decomposition (compute, exposed communication, idle), top kernels, collectives, the straggler rank, a diff against --base", RunTrace},
      {"reference", "mt reference", "the tool reference (markdown) generated from the tool schemas", RunReference},
  };
  return commands;
}

}  // namespace mt::tools::cli
