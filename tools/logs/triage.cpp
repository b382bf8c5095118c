#include "tools/logs/triage.h"

#include <re2/re2.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>

#include "tools/common/iso_time.h"
#include "tools/logs/tgs_phases.h"
#include "tools/logs/triage_heartbeat.h"
#include "tools/logs/triage_progress.h"
#include "tools/logs/triage_lifecycle.h"
#include "tools/logs/triage_root_cause.h"

namespace mt::tools {
namespace {

constexpr size_t kEvidenceBrief = 5;
constexpr size_t kEvidenceFull = 50;
constexpr size_t kNextStepsBrief = 4;
constexpr size_t kMaxExtraLogs = 64;
constexpr int kStepsAfterNonTerminal = 3;

// Classes that never end a job by themselves.
bool NonFatal(const std::string& cls) {
  return cls == "ray_start_fail" || cls == "dmabuf_guard" || cls == "tgs_degradation";
}

struct FileScanView {
  std::string display;
  ScanHandle handle;
  const LogScan& scan() const { return handle.data->scan; }
};

Json TimeOrNull(int64_t t) { return t == kNoTime ? Json(nullptr) : Json(FormatIso8601(t)); }

template <typename T>
Json OptOrNull(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json Round(double v, int digits = 3) {
  if (!std::isfinite(v)) return nullptr;
  double f = std::pow(10.0, digits);
  return std::round(v * f) / f;
}

Json OptRound(const std::optional<double>& v, int digits = 3) { return v ? Round(*v, digits) : Json(nullptr); }

Json EvJson(const Ev& e) {
  return Json{{"file", e.file},
              {"line", e.ref.line},
              {"rank", e.ref.rank >= 0 ? Json(e.ref.rank) : Json(nullptr)},
              {"time", TimeOrNull(e.ref.time)},
              {"signature", e.signature},
              {"text", e.ref.text}};
}

// Steps whose first line is after `line` in the same file.
int StepsAfter(const LogScan& s, uint64_t line) {
  int n = 0;
  for (auto it = s.steps.rbegin(); it != s.steps.rend() && n < kStepsAfterNonTerminal; ++it)
    if (it->first_line > line) ++n;
  return n;
}

std::optional<int64_t> StepSetting(const LogScan& s, const std::string& key) {
  auto v = JobSetting(s, key);
  if (!v) return std::nullopt;
  int64_t n = 0;
  auto r = std::from_chars(v->data(), v->data() + v->size(), n);
  if (r.ec != std::errc() || r.ptr != v->data() + v->size()) return std::nullopt;
  return n;
}

// The end of a traceback whose header was cut off or never printed: "ValueError: …",
// "ModuleNotFoundError: No module …" among the log's last lines, after an optional
// "[rank3]: " prefix; or any exception name ("StopIteration", "SystemError: …") right after
// the traceback's `File "…", line N` frames.
std::optional<LineRef> TailException(const LogScan& s) {
  static const RE2 named(R"(^(?:\[[^\]]{1,40}\]:?\s*)?[A-Za-z_][\w.]*(?:Error|Exception)(?::\s|:?$))");
  static const RE2 after_frames(R"(^(?:\[[^\]]{1,40}\]:?\s*)?[A-Z][\w.]*(?::\s|$))");
  static const RE2 frame(R"(^(?:\[[^\]]{1,40}\]:?\s*)?File "[^"]+", line \d+)");
  for (auto it = s.tail.rbegin(); it != s.tail.rend(); ++it) {
    if (RE2::PartialMatch(it->text, named)) return *it;
    if (RE2::PartialMatch(it->text, after_frames))
      for (auto f = std::next(it); f != s.tail.rend() && f - it <= 4; ++f)
        if (RE2::PartialMatch(f->text, frame)) return *it;
  }
  return std::nullopt;
}

// The shell's report that the job's process got SIGKILL ("Killed", or "bash: line 3: 4242
// Killed  python …") as the log's last line, with nothing else in the log naming a cause.
std::optional<LineRef> TailSigkill(const LogScan& s) {
  static const RE2 killed(R"(^(?:.*\d+\s+)?Killed(?:\s+.*)?$)");
  if (s.tail.empty()) return std::nullopt;
  const LineRef& last = s.tail.back();
  if (RE2::FullMatch(last.text, killed)) return last;
  return std::nullopt;
}

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
Json NextSteps(const std::string& cls, const std::string& job, const Progress& p,
               const std::optional<HeartbeatAnalysis>& hb, const std::optional<TgsAnalysis>& tgs,
               const std::vector<Ev>& evidence, int64_t now, bool has_tsdb, const JobFiles& files) {
  Json steps = Json::array();
  auto add = [&](const std::string& tool, Json args, const std::string& why) {
    steps.push_back(Json{{"tool", tool}, {"arguments", std::move(args)}, {"reason", why}});
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
  if (!has_tsdb) {
    Json kept = Json::array();
    for (auto& s : steps)
      if (s["tool"] != "query_tsdb") kept.push_back(s);
    steps = kept;
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

Json TriageJob(const JobFiles& job, const TriageOptions& opt, ScanCache& cache, Json* scan_meta) {
  if (job.log.empty())
    throw std::runtime_error("job " + (job.id.empty() ? job.name : job.id) +
                             " has no log yet (the `log` link does not resolve): it may still be queued");
  FileScanView primary{job.log_display, cache.Get(job.log)};
  const LogScan& ps = primary.scan();
  const int64_t mtime = primary.handle.data->mtime_ns / 1000000000;
  std::vector<FileScanView> extras;
  auto add_extra = [&](const std::filesystem::path& p, const std::string& display) {
    if (extras.size() >= kMaxExtraLogs) return;
    try {
      extras.push_back({display, cache.Get(p)});
    } catch (const std::exception&) {
      // An unreadable side log does not stop triage of the main one.
    }
  };
  auto disp = [&](const std::filesystem::path& p) {
    if (job.dir.empty()) return p.string();
    return job.dir_display + "/" + p.lexically_relative(job.dir).string();
  };
  for (const auto& p : job.rank_logs) add_extra(p, disp(p));
  for (const auto& p : job.ray_worker_logs) add_extra(p, disp(p));

  // Steps: the main log, unless a Ray worker log (authoritative when the Slurm log was
  // truncated) got further.
  const FileScanView* steps_view = &primary;
  for (const auto& e : extras)
    if (!e.scan().steps.empty() &&
        (steps_view->scan().steps.empty() || e.scan().steps.back().step > steps_view->scan().steps.back().step))
      steps_view = &e;
  const LogScan& ss = steps_view->scan();

  // Candidate classes from signatures.
  std::map<std::string, Candidate> cands;
  std::vector<std::string> nonfatal;
  const std::vector<const FileScanView*> views = [&] {
    std::vector<const FileScanView*> v{&primary};
    for (const auto& e : extras) v.push_back(&e);
    return v;
  }();
  int64_t first_terminal_time = kNoTime;
  for (const FileScanView* v : views) {
    for (const auto& [kind, hits] : v->scan().signatures) {
      if (hits.cls.empty() || hits.count == 0) continue;
      Candidate& c = cands[hits.cls];
      c.count += hits.count;
      for (const auto& r : hits.first) c.evidence.push_back({v->display, r, kind});
      bool terminal = true;
      if (v == steps_view && !hits.last.empty()) terminal = StepsAfter(v->scan(), hits.last.back().line) < kStepsAfterNonTerminal;
      c.terminal |= terminal;
      if (terminal && !NonFatal(hits.cls)) {
        int64_t t = hits.first.front().time;
        if (t != kNoTime && (first_terminal_time == kNoTime || t < first_terminal_time)) first_terminal_time = t;
      }
    }
  }
  // A traceback's evidence is its last line (the exception), not only its first.
  if (auto it = cands.find("python_exception"); it != cands.end())
    for (const FileScanView* v : views)
      for (const auto& tb : v->scan().tracebacks)
        if (tb.exception.line && it->second.evidence.size() < 12) it->second.evidence.push_back({v->display, tb.exception, "exception"});
  for (auto& [cls, c] : cands)
    std::sort(c.evidence.begin(), c.evidence.end(), [](const Ev& a, const Ev& b) {
      return a.file != b.file ? a.file < b.file : a.ref.line < b.ref.line;
    });
  auto add_cand = [&](const std::string& cls, const Ev& ev) {
    Candidate& c = cands[cls];
    ++c.count;
    c.terminal = true;
    c.evidence.push_back(ev);
  };
  const JobSummary& sum = ps.summary;
  bool summary_cancel = sum.present && sum.status == "FAILED" && sum.exit_code && (*sum.exit_code == 130 || *sum.exit_code == 143);
  if (summary_cancel) {
    LineRef r;
    r.line = sum.status_line ? sum.status_line : sum.line;
    r.text = "Status: FAILED (exit " + std::to_string(*sum.exit_code) + ")" + (sum.reason.empty() ? "" : " — " + sum.reason);
    add_cand("cancelled", {primary.display, r, "job_summary"});
  }
  std::vector<Ev> node_exit_ev;
  bool clean_cancel_exits = !ps.node_exits.empty();
  for (const auto& ne : ps.node_exits) {
    if (ne.exit_code != 143 && ne.exit_code != 130) clean_cancel_exits = false;
    if (ne.exit_code != 0 && ne.exit_code != 143 && ne.exit_code != 130) node_exit_ev.push_back({primary.display, ne.ref, "node_exit"});
  }
  for (const auto& ev : node_exit_ev) add_cand("node_fail", ev);

  // A traceback whose lines carry another class's evidence (an NCCL error, a deadline, a
  // KeyboardInterrupt) is that class's report, not a separate Python failure.
  if (auto it = cands.find("python_exception"); it != cands.end()) {
    size_t explained = 0, total = 0;
    for (const FileScanView* v : views)
      for (const auto& tb : v->scan().tracebacks) {
        ++total;
        const uint64_t lo = tb.start.line, hi = tb.exception.line ? tb.exception.line : tb.start.line + 200;
        bool other = false;
        for (const auto& [cls, c] : cands) {
          if (cls == "python_exception" || NonFatal(cls)) continue;
          for (const auto& e : c.evidence)
            if (e.file == v->display && e.ref.line >= lo && e.ref.line <= hi) other = true;
        }
        explained += other;
      }
    if (total > 0 && explained == total) cands.erase(it);
  }
  // No traceback header (cut off, or a launcher that prints only the exception): a top-level
  // "SomeError: message" among the log's last lines, when nothing else ended the job.
  {
    bool terminal_present = false;
    for (const auto& [cls, c] : cands) terminal_present |= c.terminal && !NonFatal(cls);
    if (!terminal_present && !sum.present) {
      if (auto ex = TailException(ps)) add_cand("python_exception", {primary.display, *ex, "tail_exception"});
      else if (auto k = TailSigkill(ps)) add_cand("host_oom", {primary.display, *k, "sigkill"});
    }
  }

  // Progress and the hang rule. The job ended when the log says so: summary, Slurm
  // cancellation, or a terminal error after which nothing progressed.
  // Liveness is read on the log's own clock; the mtime only when it is not after `now`.
  LivenessClock clock = ChooseClock(ps, mtime, opt.now);
  if (steps_view != &primary) {
    LivenessClock c2 = ChooseClock(ss, steps_view->handle.data->mtime_ns / 1000000000, opt.now);
    if (c2.last_activity != kNoTime && (clock.last_activity == kNoTime || c2.last_activity > clock.last_activity)) clock = c2;
  }
  std::optional<int64_t> total_steps = StepSetting(ss, "steps");
  if (!total_steps && ss.step_total > 0) total_steps = ss.step_total;
  const bool finished_all = total_steps && !ss.steps.empty() && ss.steps.back().step >= *total_steps - 1;
  const Lifecycle life = ReadLifecycle(ps, finished_all);
  bool fatal_present = false;
  for (const auto& [cls, c] : cands)
    if (c.terminal && !NonFatal(cls) && cls != "cancelled" && cls != "node_fail") fatal_present = true;
  // When the job ended: the end evidence's own time, else the log's last activity (the end
  // line is among the last lines). Silence after the end is expected, not a hang.
  int64_t end_time = kNoTime;
  if (life.ended) end_time = life.end_time != kNoTime ? life.end_time : clock.last_activity;
  for (const auto& e : ps.slurm_ends)
    if (e.time != kNoTime) end_time = e.time;
  if (end_time == kNoTime && fatal_present) end_time = first_terminal_time != kNoTime ? first_terminal_time : clock.last_activity;
  if (end_time == kNoTime && life.training_finished) end_time = clock.last_activity;
  Progress prog = ComputeProgress(ss, clock, opt.now, end_time);

  // Heartbeat: false positive or not, and the hang-then-heartbeat cascade.
  auto hb = AnalyzeHeartbeat(ps, opt.heartbeat_timeout_seconds);
  bool hang_before_heartbeat = false;
  if (hb && cands.count("heartbeat")) {
    Candidate c = cands["heartbeat"];
    cands.erase("heartbeat");
    if (hb->false_positive) {
      // Evidence: the accusation, then each accused task's own last step and death.
      for (const auto& a : hb->accused) {
        if (a.last_step_line) {
          LineRef r;
          r.line = a.last_step_line;
          r.rank = a.task;
          r.time = a.last_step_time;
          r.text = "completed step: " + std::to_string(*a.last_step) + " (accused task " + std::to_string(a.task) + ")";
          c.evidence.push_back({primary.display, r, "accused_task_progress"});
        }
        if (a.own_death_line) {
          LineRef r;
          r.line = a.own_death_line;
          r.rank = a.task;
          auto it = ps.signatures.find("own_death");
          if (it != ps.signatures.end())
            for (const auto& o : it->second.first)
              if (o.line == a.own_death_line) r = o;
          c.evidence.push_back({primary.display, r, "accused_task_own_death"});
        }
      }
    }
    if (prog.last_progress_time != kNoTime && hb->crash_time != kNoTime &&
        static_cast<double>(hb->crash_time - prog.last_progress_time) > prog.hang_threshold_seconds)
      hang_before_heartbeat = true;
    cands[hb->false_positive ? "heartbeat_false_positive" : "heartbeat"] = c;
  }
  // Stage.
  std::string stage;
  const StageEvent* stage_end = nullptr;
  for (const auto& ev : ps.stages) {
    if (ev.event == "BEGIN") stage = ev.stage;
    if (ev.event == "TIMEOUT" || ev.event == "FAILED") stage_end = &ev;
  }
  if (stage_end) stage = stage_end->stage;
  if (stage.empty() && (!ss.steps.empty() || ps.memstats)) stage = "Training";
  // The stage_timeout class is for launcher stages; a Training TIMEOUT is a stall.
  if (stage_end && stage_end->event == "TIMEOUT" && stage_end->stage == "Training" && cands.count("stage_timeout")) {
    cands["hang"] = cands["stage_timeout"];
    cands.erase("stage_timeout");
  }
  std::string phase;
  if (stage == "Training") phase = !ss.steps.empty() ? "steps" : ps.memstats ? "compile" : "init";

  // Status and soft success.
  std::string status;
  std::string undecided;   // why the status is unknown and what would decide it
  bool soft_success = false;
  if (sum.present) {
    if (sum.status == "SUCCESS") status = "completed";
    else if (finished_all) {
      status = "completed";
      soft_success = true;
    } else if (summary_cancel) status = "cancelled";
    else status = "failed";
  } else if (life.end_source == "launcher_end_line") {
    // The launcher's own end line: its exit code decides; without one, the evidence does.
    // Exit 0 is not proof: a wrapper's code is often its own (`…; echo "exit code $?"` after
    // a pipe, a runner that stops on an error and exits cleanly). Fatal evidence after which
    // the training neither progressed nor finished outweighs it.
    const bool ok = life.exit_code ? *life.exit_code == 0 && (life.training_finished || !fatal_present)
                                   : (life.training_finished || !fatal_present);
    status = ok || finished_all ? "completed" : "failed";
    soft_success = !ok && finished_all;
  } else if (!ps.slurm_ends.empty()) {
    status = finished_all ? "completed" : ps.slurm_ends.back().reason == "NODE FAILURE" ? "failed" : "cancelled";
    soft_success = finished_all;
  } else if (ps.lines == 0) {
    status = "unknown";
  } else if (fatal_present) {
    status = life.training_finished ? "completed" : "failed";
    soft_success = life.training_finished;
  } else if (life.training_finished) {
    status = "completed";
  } else if (life.end_source == "srun_task_exit") {
    status = "failed";
  } else if (prog.stalled) {
    status = "hang";
  } else if (clock.source == "none") {
    status = "unknown";
    undecided = "the log has no time stamps and its mtime is after `now`, so silence cannot be measured: "
                "running and hung look the same. Pass the time the log was copied as `now`, or read the live "
                "log (its mtime) or the job's TSDB (last step time) to decide";
  } else {
    status = "running";
  }
  if (status != "completed" && status != "running" && prog.stalled && ps.lines > 0) {
    LineRef r;
    if (!ss.steps.empty()) {
      const StepRecord& last = ss.steps.back();
      r.line = last.last_line;
      r.rank = last.rank;
      r.time = last.last_time;
      r.text = "completed step: " + std::to_string(last.step) + " — the last progress; silent for " +
               ShortTime(prog.silent_seconds.value_or(0)) + " after it";
    } else {
      r.line = ps.lines;
      r.text = "no completed step; last log activity " + ShortTime(prog.silent_seconds.value_or(0)) + " before " +
               (end_time != kNoTime ? "the end" : "now");
    }
    Candidate& h = cands["hang"];
    h.terminal = true;
    ++h.count;
    h.evidence.insert(h.evidence.begin(), Ev{steps_view->display, r, "last_progress"});
  }
  if (clean_cancel_exits && cands.count("node_fail") == 0 && !ps.node_exits.empty())
    add_cand("cancelled", {primary.display, ps.node_exits.front().ref, "node_exit_143"});

  // Primary class.
  std::string cls;
  std::string root_cause_rule;
  if (status == "completed") {
    cls = "completed";
    root_cause_rule = life.ended ? "the job ended successfully (" + life.end_source + ")"
                                 : "the training loop reached its end";
  } else {
    std::vector<std::string> skip;
    if (hang_before_heartbeat) skip = {"heartbeat", "heartbeat_false_positive"};
    if (status == "running") skip.push_back("hang");
    RootCause rc = PickRootCause(cands, primary.display, skip);
    cls = rc.cls;
    root_cause_rule = rc.rule;
    if (cls.empty()) {
      cls = status == "running" ? "running" : status == "hang" ? "hang" : status == "cancelled" ? "cancelled" : "unknown";
      root_cause_rule = "no fatal evidence in the log: the class is the job's status";
      if (cls == "unknown" && undecided.empty())
        undecided = status == "failed" ? "the job ended with a failure but the log names no cause: read the rank logs "
                                         "(read_log) or the job's TSDB around its end"
                                       : "the log holds no evidence of how the job went";
    }
    if (cls == "running" && status != "running") status = "running";
  }
  // TGS.
  std::optional<TgsAnalysis> tgs = CachedTgs(steps_view->handle.data, ss);
  std::vector<std::string> secondary;
  for (const auto& name : TriageClasses()) {
    if (name == cls) continue;
    auto it = cands.find(name);
    if (it != cands.end()) secondary.push_back(name);
    else if (name == "tgs_degradation" && tgs && tgs->degraded) secondary.push_back(name);
  }
  // Evidence: primary first, then the secondaries, then the summary line.
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
    push({primary.display, r, "job_summary"});
  }
  if (cls == "completed" || cls == "running") {
    if (!ss.steps.empty()) {
      const StepRecord& last = ss.steps.back();
      LineRef r;
      r.line = last.last_line;
      r.rank = last.rank;
      r.time = last.last_time;
      r.text = "completed step: " + std::to_string(last.step) + " (last step)";
      push({steps_view->display, r, "last_step"});
    }
  }
  // Keep the primary's evidence first but the rest in file order.
  const size_t evidence_total = evidence.size();
  const size_t keep = opt.full ? kEvidenceFull : kEvidenceBrief;
  bool truncated = evidence.size() > keep;
  if (truncated) evidence.resize(keep);

  // Exit code.
  std::optional<int> exit_code;
  if (sum.present && sum.exit_code) exit_code = sum.exit_code;
  else if (stage_end && stage_end->exit_code) exit_code = stage_end->exit_code;
  else if (life.exit_code) exit_code = life.exit_code;
  else
    for (const auto& ne : ps.node_exits)
      if (!exit_code || (*exit_code == 143 && ne.exit_code != 143)) exit_code = ne.exit_code;

  const std::string job_ref = !job.id.empty() ? job.id : job.log_display;
  Json out;
  auto header = [&](const char* k) -> Json {
    auto it = ps.header.find(k);
    return it == ps.header.end() ? Json(nullptr) : Json(it->second);
  };
  Json nodes = nullptr;
  if (auto it = ps.header.find("NNODES"); it != ps.header.end()) {
    try {
      nodes = std::stoi(it->second);
    } catch (const std::exception&) {
    }
  } else if (sum.nodes) {
    nodes = *sum.nodes;
  }
  Json model = header("MODEL_NAME");
  if (model.is_null() && !sum.model.empty()) model = sum.model;
  out["job"] = Json{{"id", job.id.empty() ? Json(nullptr) : Json(job.id)},
                    {"name", !header("JOB_NAME").is_null() ? header("JOB_NAME") : Json(job.name)},
                    {"kind", job.kind},
                    {"log", job.log_display},
                    {"dir", job.dir.empty() ? Json(nullptr) : Json(job.dir_display)},
                    {"model", model},
                    {"nodes", nodes},
                    {"nodelist", !header("JOB_NODELIST").is_null() ? header("JOB_NODELIST") : header("SLURM_JOB_NODELIST")},
                    {"uses_ray", ps.uses_ray || ps.header.count("RAY_PORT") > 0},
                    {"has_tsdb", job.has_tsdb}};
  out["now"] = FormatIso8601(opt.now);
  out["class"] = cls;
  out["secondary"] = secondary;
  out["status"] = status;
  out["soft_success"] = soft_success;
  out["root_cause_rule"] = root_cause_rule;
  out["undecided"] = undecided.empty() ? Json(nullptr) : Json(undecided);
  out["lifecycle"] = LifecycleJson(life);
  out["clock"] = ClockJson(clock);
  out["stage"] = stage.empty() ? Json(nullptr) : Json(stage);
  out["training_phase"] = phase.empty() ? Json(nullptr) : Json(phase);
  out["exit_code"] = OptOrNull(exit_code);
  Json ev = Json::array();
  for (const auto& e : evidence) ev.push_back(EvJson(e));
  out["evidence"] = ev;
  out["evidence_total"] = evidence_total;
  out["first_step"] = OptOrNull(prog.first_step);
  out["last_step"] = OptOrNull(prog.last_step);
  out["restored_from_step"] = OptOrNull(prog.restored_from_step);
  out["progress"] = Json{
      {"steps_seen", prog.steps_seen},
      {"entries_per_step", Round(prog.entries_per_step, 2)},
      {"steady_step_seconds", OptRound(prog.steady_step_seconds)},
      {"recent_step_seconds", OptRound(prog.recent_step_seconds)},
      {"last_progress_time", TimeOrNull(prog.last_progress_time)},
      {"last_progress_source", prog.last_progress_source},
      {"seconds_since_progress", OptRound(prog.seconds_since_progress, 0)},
      {"expected_step_now", OptOrNull(status == "running" || status == "hang" ? prog.expected_step_now : std::nullopt)},
      {"step_seconds_sum", Round(prog.step_seconds_sum, 1)},
      {"step_seconds_rank", OptOrNull(prog.step_seconds_rank)},
      {"wall_seconds", OptRound(prog.wall_seconds, 1)},
      {"unaccounted_seconds", OptRound(prog.unaccounted_seconds, 1)},
      {"stall_detected", prog.stall_detected},
      {"total_steps", OptOrNull(prog.total_steps)},
      {"percent_complete", OptRound(prog.percent_complete, 1)},
      {"checkpoint_period", OptOrNull(prog.checkpoint_period)},
      {"checkpoint_period_assumed", prog.checkpoint_period_assumed},
      {"last_checkpoint_step", OptOrNull(prog.last_checkpoint_step)},
      {"progress_lost_steps", OptOrNull(prog.progress_lost_steps)},
      {"eta_seconds", OptOrNull(status == "running" ? prog.eta_seconds : std::nullopt)},
  };
  out["hang"] = Json{{"stalled", prog.stalled},
                     {"threshold_seconds", Round(prog.hang_threshold_seconds, 1)},
                     {"silent_seconds", OptRound(prog.silent_seconds, 0)},
                     {"measured_until", end_time != kNoTime ? "job end" : "now"},
                     {"rule", prog.hang_rule}};
  if (hb) {
    Json accused = Json::array();
    for (const auto& a : hb->accused)
      accused.push_back(Json{{"task", a.task},
                             {"host", a.host.empty() ? Json(nullptr) : Json(a.host)},
                             {"logged_own_death", a.logged_own_death},
                             {"own_death_line", a.own_death_line ? Json(a.own_death_line) : Json(nullptr)},
                             {"last_step", OptOrNull(a.last_step)},
                             {"last_step_line", a.last_step_line ? Json(a.last_step_line) : Json(nullptr)},
                             {"progress_after_stop", a.progress_after_stop},
                             {"in_lockstep", a.in_lockstep}});
    Json neighbours = Json::array();
    for (size_t i = 0; i < hb->neighbours.size(); ++i)
      neighbours.push_back(Json{{"task", hb->neighbours[i]},
                                {"host", i < hb->neighbour_hosts.size() ? Json(hb->neighbour_hosts[i]) : Json(nullptr)}});
    out["heartbeat"] = Json{{"report_line", hb->report.line},
                            {"reporters", hb->reporters},
                            {"crash_time", TimeOrNull(hb->crash_time)},
                            {"timeout_seconds", OptOrNull(hb->timeout_seconds)},
                            {"timeout_source", hb->timeout_source},
                            {"heartbeat_stop_time", TimeOrNull(hb->heartbeat_stop_time)},
                            {"accused", accused},
                            {"neighbours", neighbours},
                            {"false_positive", hb->false_positive},
                            {"hang_before_heartbeat", hang_before_heartbeat},
                            {"reasoning", hb->reasoning}};
  } else {
    out["heartbeat"] = nullptr;
  }
  if (tgs) {
    Json phases = Json::array();
    for (const auto& p : tgs->phases)
      phases.push_back(Json{{"start_step", p.start_step}, {"end_step", p.end_step}, {"steps", p.steps},
                            {"mean", Round(p.mean, 1)}, {"std", Round(p.std, 1)}, {"change_pct", Round(p.change_pct, 1)}});
    out["tgs"] = Json{{"steady_mean", Round(tgs->steady_mean, 1)}, {"tail_mean", Round(tgs->tail_mean, 1)},
                      {"degradation_pct", Round(tgs->degradation_pct, 1)}, {"degraded", tgs->degraded},
                      {"pattern", tgs->pattern}, {"warmup_steps", tgs->warmup_steps},
                      {"decline_onset_step", OptOrNull(tgs->decline_onset_step)},
                      {"spikes", tgs->spikes.size()}, {"phases", phases}};
  } else {
    out["tgs"] = nullptr;
  }
  if (!ps.init_waves.empty()) {
    int before = 0, during = 0;
    Json waves = Json::array();
    for (const auto& w : ps.init_waves) {
      (w.after_step < 0 ? before : during)++;
      waves.push_back(Json{{"first_line", w.first_line}, {"last_line", w.last_line}, {"lines", w.lines},
                           {"after_step", w.after_step >= 0 ? Json(w.after_step) : Json(nullptr)}});
    }
    Json j{{"count", ps.init_waves.size()}, {"before_training", before}, {"during_training", during},
           {"single_replica_restore", ps.single_replica_restore}};
    if (opt.full) j["waves"] = waves;
    out["rccl_init_waves"] = j;
  } else {
    out["rccl_init_waves"] = nullptr;
  }
  Json counts = Json::object();
  for (const FileScanView* v : views)
    for (const auto& [kind, hits] : v->scan().signatures)
      if (!hits.cls.empty()) counts[kind] = counts.value(kind, 0) + hits.count;
  out["signature_counts"] = counts;
  Json next = NextSteps(cls, job_ref, prog, hb, tgs, evidence, opt.now, job.has_tsdb, job);
  if (!opt.full && next.size() > kNextStepsBrief) next.erase(next.begin() + kNextStepsBrief, next.end());
  out["next_steps"] = next;
  std::string remedy = Remedy(cls);
  out["remedy"] = remedy.empty() ? Json(nullptr) : Json(remedy);
  uint64_t bytes = 0, lines = 0, oversized = 0;
  bool changed = false;
  for (const FileScanView* v : views) {
    bytes += v->scan().bytes;
    lines += v->scan().lines;
    oversized += v->scan().oversized_lines;
    changed |= v->handle.data->changed_during_read;
  }
  out["scan"] = Json{{"files", views.size()},     {"bytes", bytes},
                     {"lines", lines},            {"oversized_lines", oversized},
                     {"changed_during_read", changed}, {"steps_from", steps_view->display}};
  if (scan_meta)
    *scan_meta = Json{{"from_cache", primary.handle.from_cache}, {"incremental", primary.handle.incremental}};
  out["truncated"] = truncated;
  out["omitted"] = truncated ? Json(std::to_string(evidence_total - keep) +
                                    " more evidence lines omitted; call again with detail=\"full\" or use read_log")
                             : Json(nullptr);
  out["headline"] = TriageHeadline(out);
  return out;
}

bool MayBeRunning(const Json& t) {
  if (!t.is_object()) return false;
  const std::string status = t.value("status", "");
  if (status == "running" || status == "hang") return true;
  return status == "unknown" && t.contains("lifecycle") && !t["lifecycle"].value("ended", false);
}

std::string TriageHeadline(const Json& t) {
  std::string id = t["job"]["id"].is_string() ? t["job"]["id"].get<std::string>() : t["job"]["log"].get<std::string>();
  std::string s = id + ": " + t["class"].get<std::string>() + " (status " + t["status"].get<std::string>() + ")";
  if (t["last_step"].is_number()) s += ", last step " + std::to_string(t["last_step"].get<int64_t>());
  if (t["class"] == "hang" && t["hang"]["silent_seconds"].is_number())
    s += ", silent " + ShortTime(t["hang"]["silent_seconds"].get<double>()) + " (threshold " +
         ShortTime(t["hang"]["threshold_seconds"].get<double>()) + ")";
  if (t["heartbeat"].is_object() && t["heartbeat"]["heartbeat_stop_time"].is_string())
    s += ", heartbeats stopped " + t["heartbeat"]["heartbeat_stop_time"].get<std::string>();
  if (t["soft_success"].get<bool>()) s += ", soft success";
  if (!t["secondary"].empty()) {
    s += "; also";
    for (const auto& c : t["secondary"]) s += " " + c.get<std::string>();
  }
  return s;
}

Json TriageLogStructured(const JobFiles& job, const Json& args, Json* scan_meta) {
  TriageOptions o;
  if (args.contains("now")) {
    auto t = ParseIso8601(args["now"].get<std::string>());
    if (!t) throw std::invalid_argument("now: '" + args["now"].get<std::string>() + "' is not an ISO-8601 time such as 2026-02-24T19:21:00Z");
    o.now = *t;
  } else {
    o.now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  }
  o.full = args.value("detail", std::string("summary")) == "full";
  if (args.contains("heartbeat_timeout_seconds")) o.heartbeat_timeout_seconds = args["heartbeat_timeout_seconds"].get<int64_t>();
  return TriageJob(job, o, ScanCache::Shared(), scan_meta);
}

}  // namespace mt::tools
