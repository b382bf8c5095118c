#include "exporter/kmsg_collector.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>

#include "exporter/text_util.h"

namespace mt::exporter {

namespace {
bool ContainsAny(std::string_view lower, std::initializer_list<std::string_view> words) {
  return std::any_of(words.begin(), words.end(),
                     [&](std::string_view w) { return lower.find(w) != std::string_view::npos; });
}
}  // namespace

bool IsGpuErrorRecord(std::string_view record) {
  size_t semi = record.find(';');
  if (semi == std::string_view::npos) return false;
  std::string_view head = record.substr(0, semi);
  size_t comma = head.find(',');
  auto prefix = ParseU64(head.substr(0, comma));
  if (!prefix || (*prefix & 7) > 4) return false;  // syslog level = prefix & 7
  std::string lower(record.substr(semi + 1));
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ContainsAny(lower, {"amdgpu", "drm", "xgmi"}) &&
         ContainsAny(lower, {"error", "fault", "fail", "reset", "timeout"});
}

KmsgCollector::~KmsgCollector() {
  if (fd_ >= 0) ::close(fd_);
}

void KmsgCollector::Drain() {
  // /dev/kmsg returns one record per read(); a regular file (fixture) returns arbitrary
  // chunks. Splitting on '\n' handles both. Continuation lines (" KEY=value") start
  // with a space and are not records.
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) continue;  // records overwritten before we read them: skip ahead
      break;                          // EAGAIN: caught up
    }
    if (n == 0) break;
    partial_.append(buf, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string_view line(partial_.data() + start, nl - start);
      if (!line.empty() && line.front() != ' ' && IsGpuErrorRecord(line)) ++count_;
    }
    partial_.erase(0, start);
    if (partial_.size() > 65536) partial_.clear();
  }
}

bool KmsgCollector::Collect(MetricSink& sink) {
  if (unreadable_) return true;
  if (fd_ < 0) {
    fd_ = ::open(fs_.Path("/dev/kmsg").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) {
      unreadable_ = true;  // not readable here (container, no CAP_SYSLOG): family absent
      return true;
    }
  }
  Drain();
  sink.Counter("hw_dmesg_gpu_errors_total",
               "Kernel log records (priority <= warning) reporting amdgpu/drm/xgmi errors, faults, resets or timeouts.",
               {}, static_cast<double>(count_));
  return true;
}

}  // namespace mt::exporter
