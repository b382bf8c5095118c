#include "base/append_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

namespace mt::base {

Status AppendLocked(const std::filesystem::path& file, const std::string& text, const std::string& what) {
  std::error_code ec;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
  // What failed, with errno's code and text.
  auto failed = [](const std::string& msg) { return StatusOfErrno(errno, msg); };
  const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return failed("cannot open " + what + " " + file.string());
  Status st;
  if (::flock(fd, LOCK_EX) != 0) st = failed("cannot lock " + what);
  for (size_t done = 0; st.ok() && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) st = failed("cannot write " + what + " " + file.string());
    else if (n == 0) st = Status(Errc::kIo, "cannot write " + what + " " + file.string() + ": no progress");
    else done += static_cast<size_t>(n);
  }
  if (st.ok() && ::fsync(fd) != 0) st = failed("cannot fsync " + what + " " + file.string());
  ::close(fd);   // releases the lock
  return st;
}

}  // namespace mt::base
