#include "launcher/job/child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

namespace mt::launch::job {

pid_t Spawn(const std::vector<std::string>& argv, const SpawnOptions& o, std::string* error) {
  if (argv.empty()) return *error = "empty command", -1;
  int fail[2];
  if (pipe2(fail, O_CLOEXEC) != 0) return *error = std::string("pipe: ") + std::strerror(errno), -1;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();
  // Until it execs, the child would run this process's handlers: a SIGTERM sent to the job
  // then sets a flag in a copy of memory about to be replaced, and the signal is lost (seen:
  // a cancel that arrived while a task was being started left the task and its training
  // running). So every signal waits, blocked, until the child's handlers are the defaults;
  // one sent meanwhile then acts as it would on the program.
  sigset_t all, old_mask;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old_mask);
  const pid_t pid = fork();
  if (pid != 0) pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (pid < 0) return *error = std::string("fork: ") + std::strerror(errno), -1;
  if (pid == 0) {
    if (o.own_group) setpgid(0, 0);
    if (o.die_with_parent) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (getppid() != parent) _exit(143);
    }
    if (o.stdout_fd >= 0) dup2(o.stdout_fd, 1);
    if (o.stderr_fd >= 0) dup2(o.stderr_fd, 2);
    for (const auto& [k, v] : o.env) setenv(k.c_str(), v.c_str(), 1);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execvp(args[0], args.data());
    const int e = errno;
    (void)!write(fail[1], &e, sizeof e);
    _exit(127);
  }
  close(fail[1]);
  int e = 0;
  ssize_t got;
  // Interrupted by our own handler (a cancel), the read must go on: returning before the
  // exec would leave a signal for the child to a window where it could not act on it.
  while ((got = read(fail[0], &e, sizeof e)) < 0 && errno == EINTR) {
  }
  const bool failed = got == static_cast<ssize_t>(sizeof e);
  close(fail[0]);
  if (failed) {
    waitpid(pid, nullptr, 0);
    *error = "cannot run " + argv[0] + ": " + std::strerror(e);
    return -1;
  }
  return pid;
}

static int Decode(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1; }

int WaitExit(pid_t pid) {
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return Decode(st);
}

bool Reap(pid_t pid, int* code) {
  int st = 0;
  const pid_t r = waitpid(pid, &st, WNOHANG);
  if (r == pid) return *code = Decode(st), true;
  if (r < 0 && errno == ECHILD) return *code = -1, true;
  return false;
}

int Stop(pid_t pid, bool group, double grace_s) {
  if (pid <= 0) return -1;
  kill(group ? -pid : pid, SIGTERM);
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  int code = -1;
  while (std::chrono::steady_clock::now() < until) {
    if (Reap(pid, &code)) return code;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(group ? -pid : pid, SIGKILL);
  return WaitExit(pid);
}

static std::atomic<int> g_signal{0};
static void OnSignal(int sig) { g_signal.store(sig); }

void InstallTermHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

int PendingSignal() { return g_signal.load(); }

}  // namespace mt::launch::job
