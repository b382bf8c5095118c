#include "exporter/subprocess.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

extern char** environ;

namespace mt::exporter {

namespace {

// Children RunSubprocess has spawned and not reaped yet. Spawning and the sweep in
// KillEscapedProcesses both hold the mutex, so a child is never seen by the sweep
// before it is registered here.
std::mutex g_children_mu;
std::set<pid_t> g_own_children;
// Children this process already had when it became a subreaper (a wrapper script that
// ran `daemon & exec mt-exporter`): not ours to kill.
std::set<pid_t> g_foreign_children;

std::vector<std::string> BuildEnv(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view kv = *e;
    std::string_view key = kv.substr(0, kv.find('='));
    bool overridden = false;
    for (const auto& x : extra) {
      if (std::string_view(x).substr(0, x.find('=')) == key) overridden = true;
    }
    if (!overridden) env.emplace_back(kv);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

// One bounded capture: the first `max` bytes are kept, the total is counted, and (when
// tail_max > 0) the last tail_max bytes of the whole stream are kept as well.
struct Capture {
  std::string* keep;
  size_t max;
  uint64_t* total;
  std::string* tail = nullptr;
  size_t tail_max = 0;

  void Append(const char* p, size_t n) {
    *total += n;
    if (keep->size() < max) keep->append(p, std::min(n, max - keep->size()));
    if (tail != nullptr && tail_max > 0) {
      if (n >= tail_max) {
        tail->assign(p + n - tail_max, tail_max);
      } else {
        tail->append(p, n);
        if (tail->size() > tail_max) tail->erase(0, tail->size() - tail_max);
      }
    }
  }
};

void ReadAvailable(int fd, Capture& c, bool* eof) {
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      c.Append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) *eof = true;
    if (n < 0 && errno == EINTR) continue;
    return;  // EAGAIN or EOF or error
  }
}

int DecodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

struct ProcScan {
  std::vector<std::pair<pid_t, char>> children;  // direct children of this process: pid, state
  bool group_alive = false;  // a process that is not a zombie is still in the drained group
};

// One pass over /proc/<pid>/stat. A process that re-parented here shows up as a child the
// moment its parent exits.
ProcScan ScanProc(pid_t drain_group) {
  ProcScan out;
  const pid_t self = ::getpid();
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/stat");
    std::string line;
    if (!std::getline(f, line)) continue;
    pid_t ppid = ParentPidFromStat(line);
    if (ppid < 0) continue;
    size_t paren = line.rfind(')');
    char state = line[paren + 2];
    // fields after ')': state ppid pgrp ...
    char* end = nullptr;
    std::strtol(line.c_str() + paren + 3, &end, 10);  // ppid
    pid_t pgrp = static_cast<pid_t>(std::strtol(end, nullptr, 10));
    if (ppid == self) out.children.emplace_back(static_cast<pid_t>(std::atol(e->d_name)), state);
    if (drain_group > 0 && pgrp == drain_group && state != 'Z') out.group_alive = true;
  }
  ::closedir(d);
  return out;
}

}  // namespace

pid_t ParentPidFromStat(const std::string& stat_line) {
  size_t paren = stat_line.rfind(')');
  if (paren == std::string::npos || paren + 4 >= stat_line.size()) return -1;
  const char* p = stat_line.c_str() + paren + 2;  // state
  if (*p == '\0' || p[1] != ' ') return -1;
  char* end = nullptr;
  long ppid = std::strtol(p + 2, &end, 10);
  if (end == p + 2) return -1;
  return static_cast<pid_t>(ppid);
}

bool BecomeChildSubreaper() {
  std::lock_guard lock(g_children_mu);
  for (const auto& [pid, state] : ScanProc(0).children) {
    if (!g_own_children.contains(pid)) g_foreign_children.insert(pid);
  }
  return ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
}

size_t KillEscapedProcesses(pid_t drain_group, std::chrono::milliseconds budget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  std::set<pid_t> signalled;
  size_t killed = 0;
  for (;;) {
    std::vector<pid_t> strays;
    bool group_alive = false;
    {
      std::lock_guard lock(g_children_mu);
      ProcScan scan = ScanProc(drain_group);
      group_alive = scan.group_alive;
      for (const auto& [pid, state] : scan.children) {
        if (g_own_children.contains(pid) || g_foreign_children.contains(pid)) continue;
        strays.push_back(pid);
        if (signalled.contains(pid)) continue;
        signalled.insert(pid);
        // A stray is our child until we reap it, so neither its pid nor the process
        // group it may lead can be reused under us. A setsid'd stray leads its group.
        if (::getpgid(pid) == pid) ::killpg(pid, SIGKILL);
        ::kill(pid, SIGKILL);
        if (state != 'Z') ++killed;
      }
    }
    // Done once nothing of the drained group is alive (its members' orphans have all
    // been re-parented by then) and every stray is reaped.
    if (strays.empty() && !group_alive) break;
    if (group_alive) ::killpg(drain_group, SIGKILL);
    for (pid_t pid : strays) {
      int status = 0;
      (void)::waitpid(pid, &status, WNOHANG);
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return killed;
}

SubprocessResult RunSubprocess(const std::vector<std::string>& argv,
                               const SubprocessOptions& options) {
  SubprocessResult r;
  auto t0 = std::chrono::steady_clock::now();
  if (argv.empty()) {
    r.error = "empty command";
    return r;
  }
  int outfd[2];
  if (::pipe2(outfd, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  int errfd[2] = {-1, -1};
  if (options.capture_stderr && ::pipe2(errfd, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    ::close(outfd[0]);
    ::close(outfd[1]);
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, outfd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, options.capture_stderr ? errfd[1] : options.stderr_fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);  // own process group: killpg reaches every descendant that stays in it
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::vector<std::string> env = BuildEnv(options.extra_env);
  std::vector<char*> cenv;
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  pid_t pid = -1;
  int rc = 0;
  {
    std::lock_guard lock(g_children_mu);
    rc = ::posix_spawnp(&pid, cargv[0], &fa, &attr, cargv.data(), cenv.data());
    if (rc == 0) g_own_children.insert(pid);
  }
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(outfd[1]);
  if (errfd[1] >= 0) ::close(errfd[1]);
  if (rc != 0) {
    ::close(outfd[0]);
    if (errfd[0] >= 0) ::close(errfd[0]);
    r.error = std::string("cannot run ") + argv[0] + ": " + std::strerror(rc);
    return r;
  }
  r.started = true;
  ::fcntl(outfd[0], F_SETFL, O_NONBLOCK);
  if (errfd[0] >= 0) ::fcntl(errfd[0], F_SETFL, O_NONBLOCK);

  Capture out{&r.output, options.max_output, &r.output_bytes, &r.output_tail, options.tail_bytes};
  Capture err{&r.stderr_text, options.max_stderr, &r.stderr_bytes};
  const auto deadline = t0 + options.timeout;
  bool out_eof = false;
  bool err_eof = errfd[0] < 0;
  bool exited = false;
  for (;;) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline || (options.cancel != nullptr && options.cancel->load())) {
      r.timed_out = now >= deadline;
      break;
    }
    if (!out_eof || !err_eof) {
      // Short slices: the main process may exit while a child still holds the pipe.
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
      pollfd p[2] = {{out_eof ? -1 : outfd[0], POLLIN, 0}, {err_eof ? -1 : errfd[0], POLLIN, 0}};
      ::poll(p, 2, static_cast<int>(std::min<long long>(left, 20)) + 1);
      if (!out_eof) ReadAvailable(outfd[0], out, &out_eof);
      if (!err_eof) ReadAvailable(errfd[0], err, &err_eof);
    } else {
      ::usleep(2000);
    }
    // Has the main process exited? (WNOWAIT keeps the zombie so its pid, which is also
    // the process-group id, cannot be reused before killpg below.)
    siginfo_t si{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid) {
      exited = true;
      if (!out_eof) ReadAvailable(outfd[0], out, &out_eof);
      if (!err_eof) ReadAvailable(errfd[0], err, &err_eof);
      break;
    }
  }
  ::killpg(pid, SIGKILL);  // leftovers after a normal exit, everything on timeout/cancel
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  {
    std::lock_guard lock(g_children_mu);
    g_own_children.erase(pid);
  }
  ::close(outfd[0]);
  if (errfd[0] >= 0) ::close(errfd[0]);
  // Processes that left the group (setsid, setpgid) were re-parented here when their
  // parents died (BecomeChildSubreaper); kill them too.
  if (options.kill_escaped) r.escaped_killed = KillEscapedProcesses(pid);
  r.exit_code = r.timed_out ? 124 : DecodeStatus(status);
  if (!exited && !r.timed_out) r.error = "cancelled";
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace mt::exporter
