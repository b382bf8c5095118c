#include "exporter/root_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace mt::exporter {

RootFs::RootFs(std::string root) : root_(std::move(root)) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
}

std::string RootFs::Path(std::string_view system_path) const {
  std::string p = root_;
  if (system_path.empty() || system_path.front() != '/') p += '/';
  p.append(system_path);
  return p;
}

std::optional<std::string> ReadWholeFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > (64u << 20)) break;  // sanity bound: never slurp a huge file
  }
  ::close(fd);
  return out;
}

std::optional<std::string> RootFs::Read(std::string_view system_path) const {
  return ReadWholeFile(Path(system_path));
}

std::vector<std::string> RootFs::List(std::string_view system_path) const {
  std::vector<std::string> names;
  DIR* d = ::opendir(Path(system_path).c_str());
  if (d == nullptr) return names;
  while (dirent* e = ::readdir(d)) {
    std::string_view n = e->d_name;
    if (n == "." || n == "..") continue;
    names.emplace_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

bool RootFs::Exists(std::string_view system_path) const {
  struct stat st;
  return ::stat(Path(system_path).c_str(), &st) == 0;
}

bool RootFs::IsDir(std::string_view system_path) const {
  struct stat st;
  return ::stat(Path(system_path).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::optional<std::string> RootFs::ReadLink(std::string_view system_path) const {
  char buf[4096];
  ssize_t n = ::readlink(Path(system_path).c_str(), buf, sizeof buf - 1);
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace mt::exporter
