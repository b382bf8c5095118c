#include "tools/trace/gzip_source.h"

#include <cerrno>
#include <cstring>

namespace mt::tools::trace {

GzipSource::GzipSource(const std::string& path, size_t buffer_bytes) : buf_(buffer_bytes) {
  file_ = gzopen(path.c_str(), "rb");
  if (file_ == nullptr) {
    open_error_ = errno != 0 ? std::strerror(errno) : "cannot open";
    return;
  }
  gzbuffer(file_, 256 * 1024);
}

GzipSource::~GzipSource() {
  if (file_ != nullptr) gzclose(file_);
}

void GzipSource::Refill() {
  pos_ = end_ = 0;
  if (eof_ || file_ == nullptr) return;
  int n = gzread(file_, buf_.data(), static_cast<unsigned>(buf_.size()));
  if (n > 0 && !compressed_) compressed_ = gzdirect(file_) == 0;
  if (n < 0) {
    int code = 0;
    const char* msg = gzerror(file_, &code);
    error_ = code == Z_ERRNO ? std::string(std::strerror(errno)) : std::string(msg != nullptr ? msg : "read error");
    eof_ = true;
    return;
  }
  if (n == 0) {
    eof_ = true;
    int code = 0;
    const char* msg = gzerror(file_, &code);
    // A gzip member cut short reads as a clean end with Z_BUF_ERROR pending.
    if (code != Z_OK && code != Z_STREAM_END) error_ = msg != nullptr ? msg : "read error";
    return;
  }
  end_ = static_cast<size_t>(n);
}

}  // namespace mt::tools::trace
