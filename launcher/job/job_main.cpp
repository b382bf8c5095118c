// mt-job: what a submitted job runs. The plan (artifact/plan.json) is its only input, so no
// passthrough argument is ever parsed by a shell.
//   mt-job run PLAN    the job: header, stages with timeouts, tasks (srun -l for Slurm, a
//                      labelled process per task for local), JOB SUMMARY on every exit path
//   mt-job task PLAN   one task (one node): observers (--observe), the training command,
//                      NODE_EXIT on failure
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include "launcher/job/child.h"
#include "launcher/job/observe.h"
#include "base/hostlist.h"
#include "launcher/launch/job_log_format.h"
#include "launcher/launch/plan.h"

namespace fs = std::filesystem;
using mt::launch::Plan;
using namespace mt::launch::job;

namespace {

std::string Env(const char* k, const std::string& dflt = "") {
  const char* v = std::getenv(k);
  return v && *v ? v : dflt;
}

std::string ShortHost() {
  char h[256] = {0};
  gethostname(h, sizeof h - 1);
  std::string s = h;
  return s.substr(0, s.find('.'));
}

bool LoadPlan(const std::string& path, Plan* p) {
  try {
    std::ifstream f(path);
    if (!f) return std::fprintf(stderr, "mt-job: cannot read plan %s\n", path.c_str()), false;
    const auto j = nlohmann::json::parse(f);
    if (const mt::base::Status st = mt::launch::PlanFromJson(j, p); !st.ok())
      return std::fprintf(stderr, "mt-job: %s: %s\n", path.c_str(), st.message().c_str()), false;
  } catch (const std::exception& e) {
    return std::fprintf(stderr, "mt-job: %s: %s\n", path.c_str(), e.what()), false;
  }
  return true;
}

std::string JobId(const Plan& p) { return p.job_id.empty() ? Env("SLURM_JOB_ID", "0") : p.job_id; }

// Tasks that share one machine (local runs, packed Slurm test clusters) get virtual node
// names node001…, matching the simulator's scenario; otherwise the real short host name.
bool Packed(const Plan& p) { return p.pack_tasks || p.backend == "local"; }
std::string VirtualHost(int rank) {
  char b[16];
  std::snprintf(b, sizeof b, "node%03d", rank + 1);
  return b;
}
std::vector<std::string> VirtualHosts(int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back(VirtualHost(i));
  return v;
}

void Line(const std::string& s) {
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

// ---- mt-job task -----------------------------------------------------------------------------

std::vector<std::string> Expand(const std::vector<std::string>& tmpl, const std::map<std::string, std::string>& vars,
                                const std::vector<std::string>& passthrough) {
  std::vector<std::string> out;
  for (const auto& t : tmpl) {
    if (t == "{PASSTHROUGH}") {
      out.insert(out.end(), passthrough.begin(), passthrough.end());
      continue;
    }
    std::string s;
    for (size_t i = 0; i < t.size();) {
      const size_t close = t[i] == '{' ? t.find('}', i) : std::string::npos;
      if (close != std::string::npos) {
        const auto it = vars.find(t.substr(i + 1, close - i - 1));
        if (it != vars.end()) {
          s += it->second;
          i = close + 1;
          continue;
        }
      }
      s += t[i++];
    }
    out.push_back(s);
  }
  return out;
}

int RunTask(const Plan& p, const std::string& plan_path) {
  InstallTermHandlers();
  const int rank = std::atoi(Env("SLURM_PROCID", Env("NODE_RANK", "0")).c_str());
  const std::string id = JobId(p);
  const fs::path job_dir = p.workspace / mt::launch::JobDirName(p, id);
  const std::string host = Packed(p) ? VirtualHost(rank) : ShortHost();
  std::error_code ec;
  fs::create_directories(job_dir, ec);

  // The plan's env first; the generic job variables are set over it so that a passthrough
  // `_env_JOB_ID=…` cannot make a task misreport which job it belongs to.
  std::map<std::string, std::string> vars = p.env;
  for (const auto& [k, v] : p.binaries) {
    std::string key = "MT_";
    for (char c : k) key += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    vars[key] = v;
  }
  for (const auto& [k, v] : std::map<std::string, std::string>{
           {"JOB_ID", id}, {"JOB_NAME", p.job_name}, {"JOB_DIR", job_dir.string()},
           {"JOB_WORKSPACE", p.workspace.string()}, {"OUTPUT_PATH", job_dir.string()},
           {"NODE_RANK", std::to_string(rank)}, {"NNODES", std::to_string(p.nodes)}, {"HOST", host},
           {"ARTIFACT", p.artifact_dir.string()}, {"MODEL_NAME", p.spec.model}, {"PLAN", plan_path}})
    vars[k] = v;
  const auto argv = Expand(p.train_command, vars, p.overrides);
  std::string fake_root;
  for (size_t i = 0; i + 1 < argv.size(); ++i)
    if (argv[i] == "--fake-root") fake_root = argv[i + 1];
  if (!fake_root.empty()) fs::create_directories(fake_root, ec);

  Observers obs;
  if (p.observe) {
    const int port = p.exporter_port + (Packed(p) ? rank : 0);
    if (const mt::base::Status st = StartExporter(p, job_dir, host, port, rank == 0, fake_root, &obs); !st.ok())
      Line("[Exporter] WARNING: " + host + ": " + st.message());
    if (rank == 0) {
      std::vector<std::string> targets;
      std::vector<std::string> hosts = VirtualHosts(p.nodes);
      if (!Packed(p)) mt::base::ExpandHostList(Env("SLURM_JOB_NODELIST", ShortHost()), &hosts);
      for (size_t i = 0; i < hosts.size(); ++i)
        targets.push_back(Packed(p) ? "127.0.0.1:" + std::to_string(p.exporter_port + static_cast<int>(i))
                                    : hosts[i] + ":" + std::to_string(p.exporter_port));
      if (const mt::base::Status st = StartPrometheus(p, job_dir, targets, ShortHost(), &obs); !st.ok())
        Line("[Prometheus] FAILED: " + st.message() + "; training continues without Prometheus");
    }
  }

  SpawnOptions so;
  so.own_group = true;   // signals reach it through this task, so observers stop after it
  so.die_with_parent = true;   // a task killed outright (the stage's SIGKILL) takes it along
  for (const auto& [k, v] : vars) so.env[k] = v;
  std::string err;
  int code;
  const pid_t child = Spawn(argv, so, &err);
  if (child < 0) {
    Line("[ERROR] " + err);
    code = 127;
  } else {
    int forwarded = 0;
    for (;;) {
      if (Reap(child, &code)) break;
      if (const int sig = PendingSignal(); sig && sig != forwarded) {
        kill(-child, sig);
        forwarded = sig;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  StopObservers(&obs, job_dir);
  if (code != 0) Line("NODE_EXIT host=" + host + " exit=" + std::to_string(code));
  return code;
}

// ---- mt-job run ------------------------------------------------------------------------------

std::mutex g_out;

void PumpLabelled(int fd, std::string label) {
  FILE* in = fdopen(fd, "r");
  char* line = nullptr;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&line, &cap, in)) > 0) {
    std::lock_guard<std::mutex> lock(g_out);
    std::fwrite(label.data(), 1, label.size(), stdout);
    std::fwrite(line, 1, static_cast<size_t>(n), stdout);
    if (line[n - 1] != '\n') std::fputc('\n', stdout);
    std::fflush(stdout);
  }
  free(line);
  fclose(in);
}

// The git summary of the artifact, without the diff itself.
void PrintGitSummary(const Plan& p) {
  std::ifstream g(p.artifact_dir / "git_summary.txt");
  std::stringstream ss;
  ss << g.rdbuf();
  Line("=== GIT SUMMARY BEGIN ===");
  std::string body = ss.str();
  // The diff itself stays in the artifact: diff text in the log header could look like
  // log lines (a JOB SUMMARY, a step line) to anything that scans the log.
  const auto d = body.find("[DIFF]\n"), u = body.find("[UNTRACKED]");
  if (d != std::string::npos && u != std::string::npos && u > d) {
    const std::string diff = body.substr(d + 7, u - d - 7);
    const long lines = std::count(diff.begin(), diff.end(), '\n');
    body = body.substr(0, d) + "[DIFF]\n(" + std::to_string(lines) + " lines; in " +
           (p.artifact_dir / "git_summary.txt").string() + ")\n\n" + body.substr(u);
  }
  while (!body.empty() && body.back() == '\n') body.pop_back();
  Line(body);
  Line("=== GIT SUMMARY END ===");
}

// The KEY=value header, the stage timeouts and the git summary.
void PrintJobHeader(const Plan& p, const std::string& id, int train_timeout) {
  const std::string nodelist = Packed(p) ? mt::base::CompactHostList(VirtualHosts(p.nodes))
                                         : Env("SLURM_JOB_NODELIST", ShortHost());
  std::string passthrough;
  for (const auto& a : p.passthrough) passthrough += (passthrough.empty() ? "" : " ") + a;
  Line("JOB_ID=" + id);
  Line("JOB_NAME=" + p.job_name);
  Line("NNODES=" + std::to_string(p.nodes));
  Line("JOB_NODELIST=" + nodelist);
  Line("JAX_COORDINATOR_PORT=" + std::to_string(20000 + (getpid() % 32768)));
  Line("PASSTHROUGH_ARGS=\"" + passthrough + "\"");
  Line("MODEL_NAME=" + p.spec.model);
  if (!p.spec.alias.empty()) Line("MODEL_NAME_ALIAS=" + p.spec.alias);
  if (!p.exp_tag.empty()) Line("EXP_TAG=" + p.exp_tag);
  Line("PLAN_SHA256=" + p.hash);
  Line("==STAGE TIMEOUTS (override: STAGE_TIMEOUTS=\"stage:seconds,...\")==");
  Line("  train        " + (train_timeout > 0 ? std::to_string(train_timeout) + "s" : std::string("none")));
  Line("[INFO] Running from artifact: " + p.artifact_dir.string());
  PrintGitSummary(p);
}

// The processes of the training stage and the threads copying their output.
struct StageTasks {
  std::vector<pid_t> pids;
  std::vector<std::thread> pumps;
  std::string err;   // why a task could not be started
};

// Slurm: one srun step runs `mt-job task` on every node (srun -l labels the lines).
void StartSlurmStep(const Plan& p, const std::string& plan_path, StageTasks& t) {
  std::vector<std::string> argv = {"srun", "-l", "--kill-on-bad-exit=1", "--export=ALL"};
  if (p.pack_tasks) argv.push_back("--overcommit");
  argv.insert(argv.end(), {p.binaries.at("mt-job"), "task", plan_path});
  const pid_t pid = Spawn(argv, {}, &t.err);
  if (pid > 0) t.pids.push_back(pid);
}

// Local: one `mt-job task` process per rank, its output labelled as srun -l would.
void StartLocalTasks(const Plan& p, const std::string& plan_path, StageTasks& t) {
  for (int r = 0; r < p.nodes && t.err.empty(); ++r) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      t.err = "pipe failed";
      break;
    }
    SpawnOptions so;
    so.stdout_fd = fds[1];
    so.stderr_fd = fds[1];
    so.env = {{"NODE_RANK", std::to_string(r)}};
    const pid_t pid = Spawn({p.binaries.at("mt-job"), "task", plan_path}, so, &t.err);
    close(fds[1]);
    if (pid < 0) {
      close(fds[0]);
      break;
    }
    t.pids.push_back(pid);
    t.pumps.emplace_back(PumpLabelled, fds[0], mt::launch::RankLabel(r, p.nodes));
  }
}

// How the wait for the tasks ended.
struct StageWait {
  std::vector<int> codes;   // per task
  bool timed_out = false;
  int signalled = 0;
};

void SignalRunning(const std::vector<pid_t>& tasks, const std::vector<int>& codes, int sig) {
  for (size_t k = 0; k < tasks.size(); ++k)
    if (codes[k] == -2) kill(tasks[k], sig);
}

// Reaps the tasks until all have exited; stops the others (SIGTERM, SIGKILL 30 s later)
// when one fails, on a signal or when the stage times out.
StageWait WaitForTasks(const Plan& p, const std::vector<pid_t>& tasks,
                       std::chrono::steady_clock::time_point stage_start, int train_timeout) {
  StageWait w;
  w.codes.assign(tasks.size(), -2);
  std::vector<int>& codes = w.codes;
  size_t running = tasks.size();
  bool stopping = false;
  std::chrono::steady_clock::time_point kill_at{};
  while (running > 0) {
    for (size_t i = 0; i < tasks.size(); ++i)
      if (codes[i] == -2 && Reap(tasks[i], &codes[i])) {
        --running;
        // One task failing ends the job, as `srun --kill-on-bad-exit=1` does.
        if (codes[i] != 0 && !stopping && p.backend != "slurm") {
          stopping = true;
          SignalRunning(tasks, codes, SIGTERM);
          kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        }
      }
    if (running == 0) break;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - stage_start).count();
    if (!stopping && (PendingSignal() || (train_timeout > 0 && elapsed >= train_timeout))) {
      w.signalled = PendingSignal();
      w.timed_out = !w.signalled;
      stopping = true;
      SignalRunning(tasks, codes, SIGTERM);
      kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    }
    if (stopping && std::chrono::steady_clock::now() > kill_at) SignalRunning(tasks, codes, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return w;
}

// The stage's end marker; sets the job's exit code and returns the summary's reason.
std::string EndTrainingStage(const StageWait& w, std::chrono::steady_clock::time_point stage_start,
                             int train_timeout, int* code) {
  const double e = std::chrono::duration<double>(std::chrono::steady_clock::now() - stage_start).count();
  const std::string es = std::to_string(static_cast<long long>(e)) + "s";
  std::string reason;
  if (w.timed_out) {
    *code = 124;
    Line("== Training TIMEOUT (" + es + "/" + std::to_string(train_timeout) + "s) ==");
    Line("  Hint: STAGE_TIMEOUTS=\"train:<seconds>\" to adjust.");
    reason = "Training TIMEOUT (" + es + "/" + std::to_string(train_timeout) + "s)";
  } else if (w.signalled) {
    *code = 128 + w.signalled;   // no stage marker: the stage was interrupted, not failed (as the original)
    reason = "CANCELLED (scancel / SIGTERM)";
  } else if (*code != 0) {
    Line("== Training FAILED (exit=" + std::to_string(*code) + ", " + es + ") ==");
    reason = "Training FAILED (exit=" + std::to_string(*code) + ")";
  } else {
    Line("== Training END (" + es + ") ==");
  }
  return reason;
}

int RunJob(const Plan& p, const std::string& plan_path) {
  InstallTermHandlers();
  const auto t0 = std::chrono::steady_clock::now();
  const std::string id = JobId(p);
  const fs::path job_dir = p.workspace / mt::launch::JobDirName(p, id);
  std::error_code ec;
  fs::create_directories(job_dir, ec);
  const int train_timeout = p.stage_timeouts.count("train") ? p.stage_timeouts.at("train") : -1;
  PrintJobHeader(p, id, train_timeout);

  Line(train_timeout > 0 ? "== Training BEGIN (timeout=" + std::to_string(train_timeout) + "s) =="
                         : "== Training BEGIN (no timeout) ==");
  const auto stage_start = std::chrono::steady_clock::now();
  StageTasks tasks;
  if (p.backend == "slurm") StartSlurmStep(p, plan_path, tasks);
  else StartLocalTasks(p, plan_path, tasks);
  int code = 0;
  if (!tasks.err.empty()) {
    Line("[ERROR] " + tasks.err);
    code = 127;
  }
  StageWait w = WaitForTasks(p, tasks.pids, stage_start, train_timeout);
  for (auto& t : tasks.pumps) t.join();
  for (int c : w.codes)
    if (c != 0 && code == 0) code = c;
  if (!w.signalled) w.signalled = PendingSignal();
  const std::string reason = EndTrainingStage(w, stage_start, train_timeout, &code);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Line(mt::launch::RenderJobSummary({.job_id = id,
                                     .job_name = p.job_name,
                                     .model = p.spec.model,
                                     .nodes = p.nodes,
                                     .wall_seconds = wall,
                                     .exit_code = code,
                                     .reason = reason}));
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "run" && std::string(argv[1]) != "task")) {
    std::fprintf(stderr, "usage: mt-job run PLAN.json | mt-job task PLAN.json\n");
    return 2;
  }
  Plan p;
  if (!LoadPlan(argv[2], &p)) return 1;
  return std::string(argv[1]) == "run" ? RunJob(p, argv[2]) : RunTask(p, argv[2]);
}
