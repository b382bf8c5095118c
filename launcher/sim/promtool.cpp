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
using base::Errc;
using base::Status;
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

std::filesystem::path LogOf(const std::filesystem::path& file) { return file.string() + ".promtool.log"; }

}  // namespace

std::string DefaultPromtool() {
  const char* env = std::getenv("MT_PROMTOOL");
  return env && *env ? env : "promtool";
}

BlockBuilder::BlockBuilder(std::filesystem::path out_dir, PromtoolOptions opts)
    : out_dir_(std::move(out_dir)), opts_(std::move(opts)) {}

BlockBuilder::~BlockBuilder() { (void)Finish(); }

bool BlockBuilder::ReapOne(bool block) {
  // Reap only our own children (the caller may have others), polling each by pid.
  for (;;) {
    for (auto r = running_.begin(); r != running_.end(); ++r) {
      int status = 0;
      const pid_t got = waitpid(r->first, &status, WNOHANG);
      if (got == 0 || (got < 0 && errno == EINTR)) continue;
      const bool ok = got == r->first && WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (!ok && error_.ok()) {
        const int code = got < 0 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        error_ = Status(Errc::kFailed, "promtool failed on " + r->second.filename().string() + " (exit " +
                                           std::to_string(code) + "): " + ReadTail(LogOf(r->second), 600));
      }
      std::error_code ec;
      std::filesystem::remove(LogOf(r->second), ec);
      if (ok && opts_.remove_inputs) std::filesystem::remove(r->second, ec);  // can be a GiB per job
      running_.erase(r);
      return true;
    }
    if (!block || running_.empty()) return false;
    usleep(3000);
  }
}

Status BlockBuilder::Submit(const std::filesystem::path& file) {
  if (!error_.ok()) return error_;
  std::error_code ec;
  std::filesystem::create_directories(out_dir_, ec);
  if (ec) return error_ = base::StatusOf(ec, "cannot create " + out_dir_.string());
  while (static_cast<int>(running_.size()) >= std::max(1, opts_.parallel)) ReapOne(true);
  if (!error_.ok()) return error_;
  const pid_t pid = Start(opts_.binary, file, out_dir_, LogOf(file));
  if (pid < 0) return error_ = Status(Errc::kFailed, std::string("cannot start promtool: fork failed: ") + std::strerror(errno));
  running_[pid] = file;
  return Status::Ok();
}

Status BlockBuilder::Finish() {
  while (!running_.empty()) ReapOne(true);
  return error_;
}

Status CreateBlocks(const std::vector<std::filesystem::path>& files, const std::filesystem::path& out_dir,
                    const PromtoolOptions& opts) {
  BlockBuilder b(out_dir, opts);
  for (const auto& f : files)
    if (Status e = b.Submit(f); !e.ok()) break;
  return b.Finish();
}

}  // namespace mt::launch::sim
