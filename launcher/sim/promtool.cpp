#include "launcher/sim/promtool.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace mt::launch::sim {
namespace {

std::string ReadTail(const std::filesystem::path& p, size_t max) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > max) s = "..." + s.substr(s.size() - max);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Starts promtool on one file with stdout+stderr going to `log`; returns the pid or -1.
pid_t Start(const std::string& binary, const std::filesystem::path& file, const std::filesystem::path& out_dir,
            const std::filesystem::path& log) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    dup2(fd, 1);
    dup2(fd, 2);
  }
  const std::string f = file.string(), o = out_dir.string();
  const char* argv[] = {binary.c_str(), "tsdb", "create-blocks-from", "openmetrics", "-q", f.c_str(), o.c_str(), nullptr};
  execvp(binary.c_str(), const_cast<char* const*>(argv));
  std::fprintf(stderr, "cannot run %s: %s\n", binary.c_str(), std::strerror(errno));
  _exit(127);
}

}  // namespace

std::string DefaultPromtool() {
  const char* env = std::getenv("MT_PROMTOOL");
  return env && *env ? env : "promtool";
}

std::string CreateBlocks(const std::vector<std::filesystem::path>& files, const std::filesystem::path& out_dir,
                         const PromtoolOptions& opts) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return "cannot create " + out_dir.string() + ": " + ec.message();
  std::map<pid_t, size_t> running;
  std::string error;
  size_t next = 0;
  auto log_of = [&](size_t i) { return std::filesystem::path(files[i].string() + ".promtool.log"); };
  while ((next < files.size() && error.empty()) || !running.empty()) {
    while (error.empty() && next < files.size() && static_cast<int>(running.size()) < std::max(1, opts.parallel)) {
      const pid_t pid = Start(opts.binary, files[next], out_dir, log_of(next));
      if (pid < 0) {
        error = std::string("fork failed: ") + std::strerror(errno);
        break;
      }
      running[pid] = next++;
    }
    if (running.empty()) break;
    // Reap only our own children (the caller may have others), polling each by pid.
    int status = 0;
    auto it = running.end();
    for (auto r = running.begin(); r != running.end(); ++r) {
      const pid_t got = waitpid(r->first, &status, WNOHANG);
      if (got == r->first || (got < 0 && errno != EINTR)) {
        it = r;
        break;
      }
    }
    if (it == running.end()) {
      usleep(5000);
      continue;
    }
    const size_t i = it->second;
    running.erase(it);
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok && error.empty()) {
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      error = "promtool failed on " + files[i].filename().string() + " (exit " + std::to_string(code) +
              "): " + ReadTail(log_of(i), 600);
    }
    std::filesystem::remove(log_of(i), ec);
  }
  return error;
}

}  // namespace mt::launch::sim
