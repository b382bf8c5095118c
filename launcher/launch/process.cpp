#include "launcher/launch/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace mt::launch {
namespace fs = std::filesystem;

ProcessResult RunCapture(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                         double timeout_s) {
  ProcessResult r;
  if (argv.empty()) return r.error = "empty command", r;
  int out[2], err[2], exec_fail[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(exec_fail, O_CLOEXEC))
    return r.error = std::string("pipe: ") + std::strerror(errno), r;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return r.error = std::string("fork: ") + std::strerror(errno), r;
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    signal(SIGPIPE, SIG_DFL);
    execvp(args[0], args.data());
    const int e = errno;
    (void)!write(exec_fail[1], &e, sizeof e);
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  close(exec_fail[1]);
  int child_errno = 0;
  if (read(exec_fail[0], &child_errno, sizeof child_errno) == sizeof child_errno) {
    r.error = "cannot run " + argv[0] + ": " + std::strerror(child_errno);
  }
  close(exec_fail[0]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  bool timed_out = false;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    int wait_ms = -1;
    if (timeout_s > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) {
        kill(pid, SIGKILL);
        timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(left);
    }
    if (poll(fds, 2, wait_ms) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (!r.error.empty()) return r.status = -1, r;
  r.status = timed_out ? 124 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

std::string FindOnPath(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? fs::absolute(name).string() : "";
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    const size_t end = p.find(':', start);
    const std::string dir = p.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!dir.empty()) {
      const std::string cand = dir + "/" + name;
      if (access(cand.c_str(), X_OK) == 0 && fs::is_regular_file(cand)) return cand;
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

std::string SelfDir() {
  std::error_code ec;
  const auto exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

std::string FindLauncherBinary(const std::string& name, const char* env_var) {
  if (const char* v = env_var ? std::getenv(env_var) : nullptr; v && *v) return FindOnPath(v);
  const std::string self = SelfDir();
  if (!self.empty()) {
    for (const char* rel : {"", "/../launcher", "/../exporter"}) {
      const fs::path cand = fs::path(self + rel) / name;
      if (access(cand.c_str(), X_OK) == 0) return fs::weakly_canonical(cand).string();
    }
  }
  return FindOnPath(name);
}

}  // namespace mt::launch
