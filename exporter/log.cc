#include "exporter/log.h"

#include <fcntl.h>
#include <unistd.h>

#include <ctime>
#include <mutex>

namespace mt::exporter {

namespace {
std::mutex g_mu;
int g_fd = 2;
}  // namespace

bool OpenLog(const std::string& path) {
  if (path.empty()) return true;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  std::lock_guard lock(g_mu);
  if (g_fd != 2) ::close(g_fd);
  g_fd = fd;
  return true;
}

int LogFd() {
  std::lock_guard lock(g_mu);
  return g_fd;
}

void Log(std::string_view message) {
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
  std::lock_guard lock(g_mu);
  ssize_t n = ::write(g_fd, line.data(), line.size());
  (void)n;
}

}  // namespace mt::exporter
