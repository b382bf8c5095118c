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

FileErrc ErrcOf(int err) {
  switch (err) {
    case 0: return FileErrc::kOk;
    case ENOENT:
    case ENOTDIR: return FileErrc::kNotFound;
    case ELOOP: return FileErrc::kLoop;
    case EACCES:
    case EPERM: return FileErrc::kPermission;
    case EFBIG: return FileErrc::kTooLarge;
    default: return FileErrc::kIo;
  }
}

}  // namespace mt::base
