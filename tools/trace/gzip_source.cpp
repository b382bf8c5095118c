#include "tools/trace/gzip_source.h"

#include <cerrno>
#include <cstring>

namespace mt::tools::trace {
namespace {
constexpr size_t kAhead = 3;   // buffers the reader may fill ahead of the parser
}  // namespace

GzipSource::GzipSource(const std::string& path, uint64_t max_bytes, size_t buffer_bytes)
    : max_bytes_(max_bytes), buffer_bytes_(buffer_bytes) {
  file_ = gzopen(path.c_str(), "rb");
  if (file_ == nullptr) {
    open_error_ = errno != 0 ? std::strerror(errno) : "cannot open";
    return;
  }
  gzbuffer(file_, 256 * 1024);
  reader_ = std::thread([this] { ReadAhead(); });
}

GzipSource::~GzipSource() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (reader_.joinable()) reader_.join();
  if (file_ != nullptr) gzclose(file_);
}

void GzipSource::ReadAhead() {
  for (;;) {
    std::vector<char> buf;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || filled_.size() < kAhead; });
      if (stop_) return;
      if (!spare_.empty()) {
        buf = std::move(spare_.front());
        spare_.pop_front();
      }
    }
    buf.resize(buffer_bytes_);
    int n = gzread(file_, buf.data(), static_cast<unsigned>(buf.size()));
    bool over = false;
    if (n > 0) {
      read_bytes_ += static_cast<uint64_t>(n);
      over = read_bytes_ > max_bytes_;
      if (over) n = 0;   // stop here: the caller reports the cap
    }
    std::string err;
    bool end = n <= 0;
    if (over) end = true;
    if (n < 0) {
      int code = 0;
      const char* msg = gzerror(file_, &code);
      err = code == Z_ERRNO ? std::string(std::strerror(errno)) : std::string(msg != nullptr ? msg : "read error");
    } else if (n == 0 && !over) {
      int code = 0;
      const char* msg = gzerror(file_, &code);
      // A gzip member cut short reads as a clean end with Z_BUF_ERROR pending.
      if (code != Z_OK && code != Z_STREAM_END) err = msg != nullptr ? msg : "read error";
    }
    const bool first = !saw_data_;
    const bool direct = first && n > 0 && gzdirect(file_) != 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (n > 0) {
        buf.resize(static_cast<size_t>(n));
        filled_.push_back(std::move(buf));
        // Set once, before the parser can see the first buffer (it reads it after Refill).
        if (first) compressed_ = !direct, saw_data_ = true;
      }
      if (end) {
        read_error_ = err;
        read_over_cap_ = over;
        done_ = true;
      }
    }
    cv_.notify_all();
    if (end) return;
  }
}

void GzipSource::Refill() {
  if (ended_ || file_ == nullptr) return;
  std::unique_lock<std::mutex> lock(mu_);
  if (!cur_.empty()) spare_.push_back(std::move(cur_));
  cur_.clear();
  pos_ = 0;
  cv_.notify_all();
  cv_.wait(lock, [&] { return !filled_.empty() || done_; });
  if (!filled_.empty()) {
    cur_ = std::move(filled_.front());
    filled_.pop_front();
    cv_.notify_all();
    return;
  }
  ended_ = true;
  error_ = read_error_;
  over_cap_ = read_over_cap_;
}

}  // namespace mt::tools::trace
