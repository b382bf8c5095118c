#include "base/status.h"

#include <cerrno>
#include <cstring>

namespace mt::base {

std::string ErrnoText(int err) {
  char buf[256];
  // GNU strerror_r returns the message (maybe not in buf).
  const char* s = ::strerror_r(err, buf, sizeof buf);
  return s ? std::string(s) : "error " + std::to_string(err);
}

Errc ErrcOf(int err) {
  switch (err) {
    case 0: return Errc::kOk;
    case ENOENT:
    case ENOTDIR: return Errc::kNotFound;
    case ELOOP: return Errc::kLoop;
    case EACCES:
    case EPERM: return Errc::kPermission;
    case EFBIG: return Errc::kTooLarge;
    default: return Errc::kIo;
  }
}

Status StatusOfErrno(int err, const std::string& what) {
  const Errc code = ErrcOf(err);
  return Status(code == Errc::kOk ? Errc::kIo : code, what + ": " + ErrnoText(err));
}

Status StatusOf(const std::error_code& ec, const std::string& what) {
  const Errc code = ec.category() == std::system_category() || ec.category() == std::generic_category()
                        ? ErrcOf(ec.value())
                        : Errc::kIo;
  return Status(code == Errc::kOk ? Errc::kIo : code, what + ": " + ec.message());
}

}  // namespace mt::base
