#include "exporter/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <mutex>

namespace mt::exporter {

namespace {
std::mutex g_mu;
int g_fd = 2;
std::string g_path;
uint64_t g_max = 0;

std::string Stamped(std::string_view message) {
  char ts[32];
  std::time_t now = std::time(nullptr);
  std::tm tm;
  gmtime_r(&now, &tm);
  std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
  std::string line = "[";
  line += ts;
  line += "] [mt-exporter] ";
  line += message;
  line += '\n';
  return line;
}

// Called with g_mu held, before writing `incoming` bytes. Children (nvidia-smi) write
// to the same descriptor, so the size comes from the file, not from a counter.
void RotateIfFull(size_t incoming) {
  if (g_max == 0 || g_path.empty()) return;
  struct stat st;
  if (::fstat(g_fd, &st) != 0 || static_cast<uint64_t>(st.st_size) + incoming <= g_max) return;
  std::string marker;
  const std::string old = g_path + ".1";
  int fd = -1;
  if (::rename(g_path.c_str(), old.c_str()) == 0) {
    fd = ::open(g_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  }
  if (fd >= 0) {
    // Same descriptor number: children spawned with LogFd() keep working.
    ::dup2(fd, g_fd);
    ::close(fd);
    marker = "log reached " + std::to_string(g_max) + " bytes (--log-max-bytes); the previous part is in " + old;
  } else {
    if (::ftruncate(g_fd, 0) != 0) return;
    marker = "log reached " + std::to_string(g_max) + " bytes (--log-max-bytes) and could not be renamed; truncated";
  }
  std::string line = Stamped(marker);
  ssize_t n = ::write(g_fd, line.data(), line.size());
  (void)n;
}

}  // namespace

bool OpenLog(const std::string& path, uint64_t max_bytes) {
  if (path.empty()) {
    std::lock_guard lock(g_mu);
    if (g_fd != 2) ::close(g_fd);
    g_fd = 2;
    g_path.clear();
    g_max = 0;
    return true;
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  std::lock_guard lock(g_mu);
  if (g_fd != 2) ::close(g_fd);
  g_fd = fd;
  g_path = path;
  g_max = max_bytes;
  return true;
}

int LogFd() {
  std::lock_guard lock(g_mu);
  return g_fd;
}

std::vector<std::string> StderrLogLines(std::string_view source, std::string_view text, uint64_t total_bytes,
                                        std::string_view why) {
  std::vector<std::string> lines;
  const std::string prefix = std::string(source) + ": stderr: ";
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(prefix + std::string(line));
  }
  if (total_bytes > text.size()) {
    lines.push_back(prefix + "[" + std::to_string(total_bytes - text.size()) + " more bytes dropped; " +
                    std::string(why) + "]");
  }
  return lines;
}

void Log(std::string_view message) {
  std::string line = Stamped(message);
  std::lock_guard lock(g_mu);
  RotateIfFull(line.size());
  ssize_t n = ::write(g_fd, line.data(), line.size());
  (void)n;
}

}  // namespace mt::exporter
