#include "launcher/approval/audit.h"

#include "base/iso_time.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

namespace mt::launch::approval {

std::string IsoUtc(int64_t t) { return base::FormatIso8601(t); }

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

base::Status AuditLog::Append(nlohmann::json event) const {
  if (!event.contains("time")) event["time"] = IsoUtc(UnixNow());
  const std::string line = event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::error_code ec;
  if (file_.has_parent_path()) std::filesystem::create_directories(file_.parent_path(), ec);
  // What failed, with errno's code and text.
  auto failed = [](const std::string& what) { return base::StatusOfErrno(errno, what); };
  const int fd = ::open(file_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return failed("cannot open audit log " + file_.string());
  base::Status st;
  if (::flock(fd, LOCK_EX) != 0) st = failed("cannot lock audit log");
  for (size_t done = 0; st.ok() && done < line.size();) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) st = failed("cannot write audit log " + file_.string());
    else if (n == 0) st = base::Status(base::Errc::kIo, "cannot write audit log " + file_.string() + ": no progress");
    else done += static_cast<size_t>(n);
  }
  if (st.ok() && ::fsync(fd) != 0) st = failed("cannot fsync audit log " + file_.string());
  ::close(fd);   // releases the lock
  return st;
}

}  // namespace mt::launch::approval
