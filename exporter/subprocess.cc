#include "exporter/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace mt::exporter {

namespace {

constexpr size_t kMaxOutput = 16u << 20;

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

void ReadAvailable(int fd, std::string& out, bool* eof) {
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      if (out.size() < kMaxOutput) out.append(buf, std::min(static_cast<size_t>(n), kMaxOutput - out.size()));
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

}  // namespace

SubprocessResult RunSubprocess(const std::vector<std::string>& argv,
                               const SubprocessOptions& options) {
  SubprocessResult r;
  auto t0 = std::chrono::steady_clock::now();
  if (argv.empty()) {
    r.error = "empty command";
    return r;
  }
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, options.stderr_fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setpgroup(&attr, 0);  // own process group: killpg reaches every descendant
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
  int rc = ::posix_spawnp(&pid, cargv[0], &fa, &attr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(pipefd[1]);
  if (rc != 0) {
    ::close(pipefd[0]);
    r.error = std::string("cannot run ") + argv[0] + ": " + std::strerror(rc);
    return r;
  }
  r.started = true;
  ::fcntl(pipefd[0], F_SETFL, O_NONBLOCK);

  const auto deadline = t0 + options.timeout;
  bool eof = false;
  bool exited = false;
  for (;;) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline || (options.cancel != nullptr && options.cancel->load())) {
      r.timed_out = now >= deadline;
      break;
    }
    if (!eof) {
      // Short slices: the main process may exit while a child still holds the pipe.
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
      pollfd p{pipefd[0], POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 20)) + 1);
      ReadAvailable(pipefd[0], r.output, &eof);
    } else {
      ::usleep(2000);
    }
    // Has the main process exited? (WNOWAIT keeps the zombie so its pid, which is also
    // the process-group id, cannot be reused before killpg below.)
    siginfo_t si{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid) {
      exited = true;
      ReadAvailable(pipefd[0], r.output, &eof);
      break;
    }
  }
  ::killpg(pid, SIGKILL);  // leftovers after a normal exit, everything on timeout/cancel
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::close(pipefd[0]);
  r.exit_code = r.timed_out ? 124 : DecodeStatus(status);
  if (!exited && !r.timed_out) r.error = "cancelled";
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace mt::exporter
