#include "tools/logs/triage.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>

#include "tools/common/iso_time.h"
#include "tools/common/tgs_phases.h"
#include "tools/logs/triage_evidence.h"
#include "tools/logs/triage_heartbeat.h"
#include "tools/logs/triage_lifecycle.h"
#include "tools/logs/triage_progress.h"
#include "tools/logs/triage_root_cause.h"
#include "tools/logs/triage_status.h"

namespace mt::tools {
namespace {

constexpr size_t kEvidenceBrief = 5;
constexpr size_t kEvidenceFull = 50;
constexpr size_t kNextStepsBrief = 4;


std::string ShortTime(double seconds) {
  char buf[64];
  if (seconds >= 3600) std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
  else if (seconds >= 120) std::snprintf(buf, sizeof buf, "%.0f min", seconds / 60);
  else std::snprintf(buf, sizeof buf, "%.0f s", seconds);
  return buf;
}

std::string Remedy(const std::string& cls) {
  static const std::map<std::string, std::string> r = {
      {"prolog_kill", "partition-side failure before the job ran: wait or use another partition; check slurmd logs"},
      {"model_not_found", "no configs/<model>.gpu.yml matches the model name: list the configs and add or fix one"},
      {"patch_branch_fail", "the MAXTEXT_PATCH_BRANCH checkout failed: fix the branch name or retry after a remote outage"},
      {"container_pull_fail", "verify the image in container_env.sh and the registry credentials; pull it by hand once"},
      {"container_load_fail", "the image tarball is missing or unreadable: check the path and the file"},
      {"no_gpu", "no GPU visible in the container: check rocm-smi/nvidia-smi on the node and the device flags"},
      {"port_fail", "no free coordinator/Ray port: resubmit"},
      {"nccl_nic_fail", "RCCL could not pick a network interface: check `ip link` and NCCL_SOCKET_IFNAME"},
      {"stage_timeout", "a launcher stage ran past its limit: look for stuck GPU processes or a slow registry; raise STAGE_TIMEOUTS=\"<stage>:<s>\" only if the stage is legitimately slow"},
      {"xla_compile_fail", "XLA rejected the program or a flag: check XLA_FLAGS (Unknown flag) and rerun with _env_ENABLE_XLA_DUMP=1"},
      {"oom", "device memory: check XLA_PYTHON_CLIENT_MEM_FRACTION first (.85 -> .93 is often the whole fix; above .93 starves RCCL), then per_device_batch_size, max_target_length, remat_policy; do not retry unchanged"},
      {"host_oom", "host memory: lower per_device_batch_size or use remat_policy=full; check the checkpoint-time memory spike on data-parallel replica 0"},
      {"gpu_hw_error", "GPU runtime or hardware error: exclude the node, check dmesg and RAS counters"},
      {"nic_error", "RDMA completion errors: check the NIC (ionic) and IPv6 rules on the named host, reset or exclude it"},
      {"checkpoint_fs_error", "the checkpoint write failed on the shared filesystem: the last saved checkpoint is usually intact (restore from it); check NFS and I/O pressure"},
      {"nccl_error", "collective failure or timeout: check network health, look for a repeat-offender node, rerun with _env_NCCL_DEBUG=INFO"},
      {"coordination_timeout", "JAX coordination-service timeout: retry once; repeated timeouts point at the coordinator host"},
      {"heartbeat_false_positive", "the accused tasks were alive: raise jax_distributed_heartbeat_timeout_seconds (e.g. 14400) and watch for real hangs separately"},
      {"heartbeat", "confirm with the TSDB whether the accused hosts were working; if they were, raise jax_distributed_heartbeat_timeout_seconds"},
      {"signal_kill", "the training process was killed by a signal: look for core dumps in the job dir and check the DMABUF guard"},
      {"actor_fail", "the Ray actor failed: read its traceback"},
      {"subprocess_fail", "the training subprocess exited non-zero: read the output just above"},
      {"python_exception", "read the traceback (read_log around its line)"},
      {"hang", "collective deadlock is the usual cause: confirm with GPU power (busy-wait ~300 W vs ~900 W active), cancel, retry once on the same nodes, exclude outliers only if it recurs"},
      {"node_fail", "a node exited non-zero (137 SIGKILL/OOM, 134 abort, 139 segfault): check that node's hardware counters"},
      {"preempted", "Slurm preempted the job: resubmit (restores from the last checkpoint if enabled)"},
      {"time_limit", "the job reached its --time limit: resubmit with more time; it restores from the last checkpoint if enabled"},
      {"stage_fail", "a launcher stage failed: read the lines above its FAILED marker"},
      {"cancelled", "cancelled by a user or SIGTERM: cancellation is the mechanism, check why it was cancelled"},
      {"completed", "nothing to fix"},
      {"running", "training is progressing"},
      {"unknown", "the log does not say how the job ended: check the scheduler (sacct/squeue) and dmesg"},
  };
  auto it = r.find(cls);
  return it == r.end() ? std::string() : it->second;
}

// Concrete follow-ups: mt tools with arguments that their input schemas accept
// (query_tsdb: job, mode, playbook, start, end, time).
std::vector<TriageNextStep> NextSteps(const std::string& cls, const std::string& job, const Progress& p,
                                      const std::optional<HeartbeatAnalysis>& hb, const std::optional<TgsAnalysis>& tgs,
                                      const std::vector<Ev>& evidence, int64_t now, bool has_tsdb, const JobFiles& files) {
  std::vector<TriageNextStep> steps;
  auto add = [&](const std::string& tool, Json args, const std::string& why) {
    if (tool == "query_tsdb" && !has_tsdb) return;   // no TSDB to query
    steps.push_back(TriageNextStep{tool, std::move(args), why});
  };
  auto playbook = [&](const std::string& name, int64_t center, int64_t before, int64_t after) {
    Json a{{"job", job}, {"mode", "playbook"}, {"playbook", name}};
    if (center != kNoTime) {
      a["start"] = FormatIso8601(center - before);
      a["end"] = FormatIso8601(center + after);
    }
    return a;
  };
  int64_t t_last = p.last_progress_time;
  if (cls == "hang") {
    if (t_last != kNoTime)
      add("query_tsdb", playbook("hang", t_last, 1800, std::min<int64_t>(3600, std::max<int64_t>(0, now - t_last))),
          "GPU power vs utilization around the last step: ~300 W at 100 % utilization is an RCCL busy-wait deadlock");
    add("read_log", Json{{"job", job}, {"lines", "-200:"}}, "the last lines before the silence");
    add("cancel_job", Json{{"job", job}}, "a hung job holds its nodes; resubmit once on the same nodes after cancelling");
  } else if (cls == "heartbeat_false_positive" || cls == "heartbeat") {
    std::string hosts;
    if (hb) {
      for (const auto& a : hb->accused)
        if (!a.host.empty()) hosts += (hosts.empty() ? "" : ", ") + a.host;
      for (const auto& h : hb->neighbour_hosts) hosts += (hosts.empty() ? "" : ", ") + h + " (neighbour)";
    }
    if (hb && hb->heartbeat_stop_time != kNoTime && hb->crash_time != kNoTime) {
      Json a{{"job", job}, {"mode", "playbook"}, {"playbook", "heartbeat"},
             {"start", FormatIso8601(hb->heartbeat_stop_time)}, {"end", FormatIso8601(hb->crash_time)}};
      add("query_tsdb", a, "GPU power and network while the accused tasks were said to be dead; compare " + hosts);
    } else if (hb && hb->crash_time != kNoTime) {
      add("query_tsdb", Json{{"job", job}, {"mode", "correlate"}, {"time", FormatIso8601(hb->crash_time)}},
          "the heartbeat timeout is unknown: pass heartbeat_timeout_seconds to triage_log to get the heartbeat-stop time");
    }
  } else if (cls == "host_oom") {
    add("query_tsdb", playbook("host_oom", t_last, 3600, 600), "host memory, OOM kills and dirty pages before the kill");
  } else if (cls == "nccl_error" || cls == "nic_error" || cls == "coordination_timeout") {
    add("query_tsdb", playbook("network_health", t_last, 3600, 600),
        "RDMA retransmits, ACK timeouts and port state per host: find the repeat offender");
  } else if (cls == "gpu_hw_error" || cls == "node_fail" || cls == "signal_kill" || cls == "unknown") {
    add("query_tsdb", playbook("node_failure", t_last, 3600, 600),
        "RAS (UE/CE), PCIe and dmesg GPU error counters per host: the node that died or misbehaved");
  } else if (cls == "completed" || cls == "running") {
    add("perf_analysis", Json{{"job", job}}, "steady TGS, MFU and the step-time breakdown");
  }
  if (tgs && tgs->degraded) {
    std::string why = "TGS " + std::string(tgs->pattern) + ": tail " + std::to_string(static_cast<int>(std::round(tgs->degradation_pct))) +
                      " % below the early steady mean; RDMA retransmits and ACK timeouts per host are the first suspect";
    add("query_tsdb", Json{{"job", job}, {"mode", "playbook"}, {"playbook", "network_health"}}, why);
    add("query_tsdb", Json{{"job", job}, {"mode", "playbook"}, {"playbook", "training_stability"}},
        "tb_* metrics (loss, grad norm, MoE load-balance loss) at the step where TGS changed" +
            (tgs->decline_onset_step ? " (step " + std::to_string(*tgs->decline_onset_step) + ")" : std::string()));
  }
  if (!evidence.empty() && cls != "completed" && cls != "running" && cls != "hang") {
    const Ev& e = evidence.front();
    int64_t a = e.ref.line > 20 ? static_cast<int64_t>(e.ref.line) - 20 : 1;
    Json args{{"job", job}, {"lines", std::to_string(a) + ":" + std::to_string(e.ref.line + 20)}};
    // Evidence from a side log (k8s rank log, Ray worker log): read_log's `file`.
    if (e.file != files.log_display && !files.dir_display.empty() && e.file.starts_with(files.dir_display + "/"))
      args["file"] = e.file.substr(files.dir_display.size() + 1);
    add("read_log", args, "the lines around the first evidence (" + e.file + ")");
  }
  return steps;
}

// TGS analysis depends only on the scan, so it is kept next to the cached scan (keyed by
// the scan's address, checked through a weak pointer): a repeated call costs a lookup.
std::optional<TgsAnalysis> CachedTgs(const std::shared_ptr<const CachedScan>& data, const LogScan& ss) {
  struct Entry {
    std::weak_ptr<const CachedScan> owner;
    std::optional<TgsAnalysis> tgs;
  };
  static std::mutex mu;
  static std::map<const CachedScan*, Entry> cache;
  {
    std::lock_guard<std::mutex> l(mu);
    auto it = cache.find(data.get());
    if (it != cache.end() && it->second.owner.lock() == data) return it->second.tgs;
  }
  std::optional<TgsAnalysis> tgs;
  std::vector<TgsPoint> pts;
  pts.reserve(ss.steps.size());
  for (const auto& s : ss.steps)
    if (s.tgs() >= 0) pts.push_back({s.step, s.tgs()});
  if (!pts.empty()) tgs = AnalyzeTgs(std::move(pts));
  std::lock_guard<std::mutex> l(mu);
  for (auto it = cache.begin(); it != cache.end();) it = it->second.owner.expired() ? cache.erase(it) : std::next(it);
  if (cache.size() < 64) cache[data.get()] = Entry{data, tgs};
  return tgs;
}


// When the job ran and stopped, on the log's own clock: which clock, where in its life it
// is, when it ended (if it did), and its progress measured up to then.
struct Timeline {
  LivenessClock clock;
  Lifecycle life;
  bool finished_all = false;
  int64_t end_time = kNoTime;
  Progress progress;
};

Timeline ReadTimeline(const JobViews& v, const CandidateScan& cs, bool fatal_present, int64_t now) {
  const LogScan& ps = v.primary.scan();
  const LogScan& ss = v.steps->scan();
  Timeline t;
  // Liveness is read on the log's own clock; the mtime only when it is not after `now`.
  t.clock = ChooseClock(ps, v.primary.mtime(), now);
  if (v.steps != &v.primary) {
    LivenessClock c2 = ChooseClock(ss, v.steps->mtime(), now);
    if (c2.last_activity != kNoTime && (t.clock.last_activity == kNoTime || c2.last_activity > t.clock.last_activity))
      t.clock = c2;
  }
  std::optional<int64_t> total = JobSettingInt(ss, "steps");
  if (!total && ss.step_total > 0) total = ss.step_total;
  // A run of N steps ends at step N-1 when it counts from 0 (MaxText's "completed step: k"),
  // at N when its step lines say "k/N" counting from 1 (our torch lab, HF-style loggers): a
  // "k/N" run is taken to count from 0 only when it showed a step 0. Claiming the end one step
  // early would call a running job completed.
  const bool counts_from_one = ss.step_total > 0 && total == ss.step_total && !ss.steps.empty() && ss.steps.front().step > 0;
  t.finished_all = total && !ss.steps.empty() && ss.steps.back().step >= *total - (counts_from_one ? 0 : 1);
  t.life = ReadLifecycle(ps, t.finished_all);
  // When the job ended: the end evidence's own time, else the log's last activity (the end
  // line is among the last lines). Silence after the end is expected, not a hang.
  const int64_t last = t.clock.last_activity;
  if (t.life.ended) t.end_time = t.life.end_time != kNoTime ? t.life.end_time : last;
  for (const auto& e : ps.slurm_ends)
    if (e.time != kNoTime) t.end_time = e.time;
  if (t.end_time == kNoTime && fatal_present) t.end_time = cs.first_terminal_time != kNoTime ? cs.first_terminal_time : last;
  if (t.end_time == kNoTime && t.life.training_finished) t.end_time = last;
  t.progress = ComputeProgress(ss, t.clock, now, t.end_time);
  return t;
}

// Heartbeat: false positive or not (the accused tasks' own progress and death become its
// evidence), and whether a hang preceded the accusation. Returns hang_before_heartbeat.
bool ApplyHeartbeat(const JobViews& v, const Progress& prog, const std::optional<HeartbeatAnalysis>& hb,
                    Candidates* cands) {
  if (!hb || !cands->count("heartbeat")) return false;
  const LogScan& ps = v.primary.scan();
  Candidate c = (*cands)["heartbeat"];
  cands->erase("heartbeat");
  if (hb->false_positive) {
    for (const auto& a : hb->accused) {
      if (a.last_step_line) {
        LineRef r;
        r.line = a.last_step_line;
        r.rank = a.task;
        r.time = a.last_step_time;
        r.text = "completed step: " + std::to_string(*a.last_step) + " (accused task " + std::to_string(a.task) + ")";
        c.evidence.push_back({v.primary.display, r, "accused_task_progress"});
      }
      if (a.own_death_line) {
        LineRef r;
        r.line = a.own_death_line;
        r.rank = a.task;
        auto it = ps.signatures.find("own_death");
        if (it != ps.signatures.end())
          for (const auto& o : it->second.first)
            if (o.line == a.own_death_line) r = o;
        c.evidence.push_back({v.primary.display, r, "accused_task_own_death"});
      }
    }
  }
  (*cands)[hb->false_positive ? "heartbeat_false_positive" : "heartbeat"] = c;
  return prog.last_progress_time != kNoTime && hb->crash_time != kNoTime &&
         static_cast<double>(hb->crash_time - prog.last_progress_time) > prog.hang_threshold_seconds;
}

// The launcher stage the job reached (mt's `== <Stage> BEGIN|END|TIMEOUT|FAILED` markers)
// and, within Training, the phase. A Training TIMEOUT is a stall, not a stage timeout.
struct StageInfo {
  std::string stage, phase;
  const StageEvent* end = nullptr;
};

StageInfo ReadStage(const LogScan& ps, const LogScan& ss, Candidates* cands) {
  StageInfo s;
  for (const auto& ev : ps.stages) {
    if (ev.event == "BEGIN") s.stage = ev.stage;
    if (ev.event == "TIMEOUT" || ev.event == "FAILED") s.end = &ev;
  }
  if (s.end) s.stage = s.end->stage;
  if (s.stage.empty() && (!ss.steps.empty() || ps.memstats)) s.stage = "Training";
  if (s.end && s.end->event == "TIMEOUT" && s.end->stage == "Training" && cands->count("stage_timeout")) {
    (*cands)["hang"] = (*cands)["stage_timeout"];
    cands->erase("stage_timeout");
  }
  if (s.stage == "Training") s.phase = !ss.steps.empty() ? "steps" : ps.memstats ? "compile" : "init";
  return s;
}

// The silence as evidence: the last progress and how long nothing followed it.
void AddHangCandidate(const JobViews& v, const Progress& prog, int64_t end_time, Candidates* cands) {
  const LogScan& ss = v.steps->scan();
  LineRef r;
  if (!ss.steps.empty()) {
    const StepRecord& last = ss.steps.back();
    r.line = last.last_line;
    r.rank = last.rank;
    r.time = last.last_time;
    r.text = "completed step: " + std::to_string(last.step) + " — the last progress; silent for " +
             ShortTime(prog.silent_seconds.value_or(0)) + " after it";
  } else {
    r.line = v.primary.scan().lines;
    r.text = "no completed step; last log activity " + ShortTime(prog.silent_seconds.value_or(0)) + " before " +
             (end_time != kNoTime ? "the end" : "now");
  }
  Candidate& h = (*cands)["hang"];
  h.terminal = true;
  ++h.count;
  h.evidence.insert(h.evidence.begin(), Ev{v.steps->display, r, "last_progress"});
}

std::vector<std::string> SecondaryClasses(const std::string& cls, const Candidates& cands,
                                          const std::optional<TgsAnalysis>& tgs) {
  std::vector<std::string> out;
  for (const auto& name : TriageClasses()) {
    if (name == cls) continue;
    if (cands.count(name)) out.push_back(name);
    else if (name == "tgs_degradation" && tgs && tgs->degraded) out.push_back(name);
  }
  return out;
}

// Evidence: the class's own lines first, then one per secondary class, the summary line,
// and for a healthy job its last step.
std::vector<Ev> EvidenceList(const std::string& cls, const std::vector<std::string>& secondary,
                             const Candidates& cands, const JobViews& v) {
  const LogScan& ps = v.primary.scan();
  const JobSummary& sum = ps.summary;
  std::vector<Ev> evidence;
  std::set<std::pair<std::string, uint64_t>> seen;
  auto push = [&](const Ev& e) {
    if (seen.insert({e.file, e.ref.line}).second) evidence.push_back(e);
  };
  if (auto it = cands.find(cls); it != cands.end())
    for (const auto& e : it->second.evidence) push(e);
  for (const auto& s : secondary)
    if (auto it = cands.find(s); it != cands.end() && !it->second.evidence.empty()) push(it->second.evidence.front());
  if (sum.present && sum.status_line) {
    LineRef r;
    r.line = sum.status_line;
    r.text = "Status: " + sum.status + " (exit " + (sum.exit_code ? std::to_string(*sum.exit_code) : "?") + ")" +
             (sum.reason.empty() ? "" : " — " + sum.reason);
    push({v.primary.display, r, "job_summary"});
  }
  const LogScan& ss = v.steps->scan();
  if ((cls == "completed" || cls == "running") && !ss.steps.empty()) {
    const StepRecord& last = ss.steps.back();
    LineRef r;
    r.line = last.last_line;
    r.rank = last.rank;
    r.time = last.last_time;
    r.text = "completed step: " + std::to_string(last.step) + " (last step)";
    push({v.steps->display, r, "last_step"});
  }
  return evidence;
}

std::optional<int> ExitCode(const LogScan& ps, const StageEvent* stage_end, const Lifecycle& life) {
  if (ps.summary.present && ps.summary.exit_code) return ps.summary.exit_code;
  if (stage_end && stage_end->exit_code) return stage_end->exit_code;
  if (life.exit_code) return life.exit_code;
  std::optional<int> code;
  for (const auto& ne : ps.node_exits)
    if (!code || (*code == 143 && ne.exit_code != 143)) code = ne.exit_code;
  return code;
}

TriageScanStats ScanStats(const JobViews& v) {
  TriageScanStats out;
  out.files = static_cast<int64_t>(v.all.size());
  for (const FileScanView* f : v.all) {
    out.bytes += static_cast<int64_t>(f->scan().bytes);
    out.lines += static_cast<int64_t>(f->scan().lines);
    out.oversized_lines += static_cast<int64_t>(f->scan().oversized_lines);
    out.changed_during_read |= f->handle.data->changed_during_read;
  }
  out.steps_from = v.steps->display;
  return out;
}

std::map<std::string, int64_t> SignatureCounts(const JobViews& v) {
  std::map<std::string, int64_t> counts;
  for (const FileScanView* f : v.all)
    for (const auto& [kind, hits] : f->scan().signatures)
      if (!hits.cls.empty()) counts[kind] += static_cast<int64_t>(hits.count);
  return counts;
}


}  // namespace

const std::vector<std::string>& TriageClasses() {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> v = ClassPriority();
    for (const char* c : {"completed", "running", "unknown", "tgs_degradation", "ray_start_fail", "dmabuf_guard"})
      v.emplace_back(c);
    return v;
  }();
  return all;
}

TriageAnswer Triage(const JobFiles& job, const TriageOptions& opt, ScanCache& cache, Json* scan_meta) {
  JobViews v;
  OpenJobViews(job, cache, &v);
  const LogScan& ps = v.primary.scan();
  const LogScan& ss = v.steps->scan();

  CandidateScan cs = CollectCandidates(v);
  Candidates& cands = cs.cands;
  const bool fatal_present = FatalPresent(cands);
  const Timeline tl = ReadTimeline(v, cs, fatal_present, opt.now);
  const Progress& prog = tl.progress;
  const auto hb = AnalyzeHeartbeat(ps, opt.heartbeat_timeout_seconds);
  const bool hang_before_heartbeat = ApplyHeartbeat(v, prog, hb, &cands);
  const StageInfo stage = ReadStage(ps, ss, &cands);

  JobStatus st = DecideStatus({ps, tl.life, tl.clock, prog, tl.finished_all, fatal_present, cs.summary_cancel});
  if (st.status != "completed" && st.status != "running" && prog.stalled && ps.lines > 0)
    AddHangCandidate(v, prog, tl.end_time, &cands);
  if (cs.clean_cancel_exits && cands.count("node_fail") == 0 && !ps.node_exits.empty())
    AddCandidate(&cands, "cancelled", {v.primary.display, ps.node_exits.front().ref, "node_exit_143"});
  const Verdict verdict = DecideClass(&st, cands, v.primary.display, tl.life, hang_before_heartbeat);
  const std::string& cls = verdict.cls;

  std::optional<TgsAnalysis> tgs = CachedTgs(v.steps->handle.data, ss);
  const std::vector<std::string> secondary = SecondaryClasses(cls, cands, tgs);
  std::vector<Ev> evidence = EvidenceList(cls, secondary, cands, v);
  const size_t evidence_total = evidence.size();
  const size_t keep = opt.full ? kEvidenceFull : kEvidenceBrief;
  const bool truncated = evidence.size() > keep;
  if (truncated) evidence.resize(keep);

  TriageAnswer out;
  out.job = FromJob(job, ps);
  out.now = FormatIso8601(opt.now);
  out.cls = cls;
  out.secondary = secondary;
  out.status = st.status;
  out.soft_success = st.soft_success;
  out.root_cause_rule = verdict.rule;
  out.undecided = TextOrNull(st.undecided);
  out.lifecycle = FromLifecycle(tl.life);
  out.clock = FromClock(tl.clock);
  out.stage = TextOrNull(stage.stage);
  out.training_phase = TextOrNull(stage.phase);
  out.exit_code = OptInt(ExitCode(ps, stage.end, tl.life));
  for (const auto& e : evidence) out.evidence.push_back(FromEvidence(e));
  out.evidence_total = static_cast<int64_t>(evidence_total);
  out.first_step = OptInt(prog.first_step);
  out.last_step = OptInt(prog.last_step);
  out.restored_from_step = OptInt(prog.restored_from_step);
  out.progress = FromProgress(prog, st.status);
  out.hang = FromHang(prog, tl.end_time != kNoTime);
  out.heartbeat = FromHeartbeat(hb, hang_before_heartbeat);
  out.tgs = FromTgs(tgs);
  out.rccl_init_waves = FromInitWaves(ps, opt.full);
  out.signature_counts = SignatureCounts(v);
  out.next_steps = NextSteps(cls, !job.id.empty() ? job.id : job.log_display, prog, hb, tgs, evidence, opt.now,
                             job.has_tsdb, job);
  if (!opt.full && out.next_steps.size() > kNextStepsBrief) out.next_steps.resize(kNextStepsBrief);
  out.remedy = TextOrNull(Remedy(cls));
  out.scan = ScanStats(v);
  if (scan_meta)
    *scan_meta = Json{{"from_cache", v.primary.handle.from_cache}, {"incremental", v.primary.handle.incremental}};
  out.truncated = truncated;
  if (truncated)
    out.omitted = std::to_string(evidence_total - keep) +
                  " more evidence lines omitted; call again with detail=\"full\" or use read_log";
  out.headline = TriageHeadline(out);
  return out;
}

Json TriageJob(const JobFiles& job, const TriageOptions& opt, ScanCache& cache, Json* scan_meta) {
  return mcp::Encode(Triage(job, opt, cache, scan_meta));
}

bool MayBeRunning(const Json& t) {
  if (!t.is_object()) return false;
  const std::string status = t.value("status", "");
  if (status == "running" || status == "hang") return true;
  return status == "unknown" && t.contains("lifecycle") && !t["lifecycle"].value("ended", false);
}

std::string TriageHeadline(const TriageAnswer& t) {
  std::string s = t.job.id.value_or(t.job.log) + ": " + t.cls + " (status " + t.status + ")";
  if (t.last_step) s += ", last step " + std::to_string(*t.last_step);
  if (t.cls == "hang" && t.hang.silent_seconds)
    s += ", silent " + ShortTime(*t.hang.silent_seconds) + " (threshold " + ShortTime(t.hang.threshold_seconds) + ")";
  if (t.heartbeat && t.heartbeat->heartbeat_stop_time) s += ", heartbeats stopped " + *t.heartbeat->heartbeat_stop_time;
  if (t.soft_success) s += ", soft success";
  if (!t.secondary.empty()) {
    s += "; also";
    for (const auto& c : t.secondary) s += " " + c;
  }
  return s;
}

TriageOptions MakeTriageOptions(const std::optional<std::string>& now, bool full,
                                std::optional<int64_t> heartbeat_timeout_seconds) {
  TriageOptions o;
  if (now) {
    auto t = ParseIso8601(*now);
    if (!t) throw std::invalid_argument("now: '" + *now + "' is not an ISO-8601 time such as 2026-02-24T19:21:00Z");
    o.now = *t;
  } else {
    o.now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  }
  o.full = full;
  o.heartbeat_timeout_seconds = heartbeat_timeout_seconds;
  return o;
}

Json TriageLogStructured(const JobFiles& job, const Json& args, Json* scan_meta) {
  std::optional<std::string> now;
  if (args.contains("now")) now = args["now"].get<std::string>();
  std::optional<int64_t> heartbeat;
  if (args.contains("heartbeat_timeout_seconds")) heartbeat = args["heartbeat_timeout_seconds"].get<int64_t>();
  return TriageJob(job, MakeTriageOptions(now, args.value("detail", std::string("summary")) == "full", heartbeat),
                   ScanCache::Shared(), scan_meta);
}

}  // namespace mt::tools
