#include "base/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>

namespace mt::base {
namespace {

Status Fail(int err, const std::string& what) { return Status(ErrcOf(err), what + ": " + ErrnoText(err)); }

bool WriteAll(int fd, std::string_view data) {
  for (size_t done = 0; done < data.size();) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void SyncDirectory(const std::filesystem::path& dir) {
  const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return;   // best effort: the rename itself has happened
  ::fsync(dfd);
  ::close(dfd);
}

}  // namespace

Status WriteFileAtomic(const std::filesystem::path& path, std::string_view data, const AtomicWriteOptions& options) {
  // pid and a counter: two threads (or processes) writing the same file never share a temp.
  static std::atomic<unsigned> counter{0};
  const std::string tmp = path.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, options.mode);
  if (fd < 0) return Fail(errno, "cannot create " + tmp);
  int err = 0;
  std::string what;
  if (!WriteAll(fd, data)) err = errno, what = "cannot write " + tmp;
  else if (options.durable && ::fsync(fd) != 0) err = errno, what = "cannot fsync " + tmp;
  if (::close(fd) != 0 && !err) err = errno, what = "cannot write " + tmp;
  if (!err && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno, what = "cannot rename " + tmp + " to " + path.string();
  if (err) {
    ::unlink(tmp.c_str());
    return Fail(err, what);
  }
  if (options.durable) SyncDirectory(path.parent_path());
  return Status::Ok();
}

}  // namespace mt::base
