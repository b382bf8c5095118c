#include "exporter/tfrecord_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "exporter/crc32c.h"

namespace mt::exporter {

namespace {

uint64_t Le64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

uint32_t Le32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

constexpr uint64_t kHeader = 12;  // length + length CRC
constexpr uint64_t kFooter = 4;   // data CRC

}  // namespace

FileSource::FileSource(const std::string& path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
}

FileSource::~FileSource() {
  if (fd_ >= 0) ::close(fd_);
}

uint64_t FileSource::Size() {
  struct stat st;
  if (fd_ < 0 || ::fstat(fd_, &st) != 0) return 0;
  if (static_cast<uint64_t>(st.st_size) != size_) window_len_ = 0;  // grew: refresh the window
  size_ = static_cast<uint64_t>(st.st_size);
  return size_;
}

bool FileSource::Deleted() {
  struct stat st;
  return fd_ < 0 || ::fstat(fd_, &st) != 0 || st.st_nlink == 0;
}

bool FileSource::ReadAt(uint64_t offset, size_t n, char* out) {
  if (fd_ < 0) return false;
  if (n > kWindow) {  // large reads bypass the window
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
      if (r <= 0) return false;
      done += static_cast<size_t>(r);
    }
    return true;
  }
  if (offset < window_start_ || offset + n > window_start_ + window_len_) {
    ssize_t r = ::pread(fd_, window_, kWindow, static_cast<off_t>(offset));
    if (r < 0) return false;
    window_start_ = offset;
    window_len_ = static_cast<size_t>(r);
    if (window_len_ < n) return false;
  }
  std::memcpy(out, window_ + (offset - window_start_), n);
  return true;
}

bool StringSource::ReadAt(uint64_t offset, size_t n, char* out) {
  if (offset > data_.size() || n > data_.size() - offset) return false;
  std::memcpy(out, data_.data() + offset, n);
  return true;
}

TfRecordReader::Step TfRecordReader::TryAt(ByteSource& src, uint64_t size, uint64_t at,
                                           std::string* data, uint64_t* next) {
  if (size < at || size - at < kHeader) return Step::kNeedMore;
  char header[kHeader];
  if (!src.ReadAt(at, kHeader, header)) return Step::kNeedMore;
  if (MaskCrc(Crc32c(header, 8)) != Le32(header + 8)) return Step::kCorrupt;
  uint64_t len = Le64(header);
  if (len > (uint64_t{1} << 40)) return Step::kCorrupt;  // CRC collision on nonsense
  if (size - at - kHeader < len + kFooter) return Step::kNeedMore;  // still being written
  *next = at + kHeader + len + kFooter;
  if (len > options_.max_record_bytes) return Step::kSkipped;
  data->resize(len + kFooter);
  if (!src.ReadAt(at + kHeader, len + kFooter, data->data())) return Step::kNeedMore;
  if (MaskCrc(Crc32c(data->data(), len)) != Le32(data->data() + len)) return Step::kCorrupt;
  data->resize(len);
  return Step::kRecord;
}

bool TfRecordReader::Resync(ByteSource& src, uint64_t size, uint64_t from) {
  // Slide byte by byte. The length CRC rejects almost every wrong offset after reading
  // 12 bytes, so this is cheap; a candidate whose data is not written yet is waited for.
  std::string data;
  for (uint64_t at = from; size >= at && size - at >= kHeader; ++at) {
    uint64_t next = 0;
    Step s = TryAt(src, size, at, &data, &next);
    if (s == Step::kCorrupt) continue;
    offset_ = at;
    if (s == Step::kNeedMore) {
      // Only a verified length CRC gets here; keep searching from `at` next time if the
      // data CRC then fails.
      return false;
    }
    syncing_ = false;
    return true;
  }
  offset_ = size >= kHeader ? size - kHeader + 1 : 0;  // nothing found in what exists
  if (offset_ < from) offset_ = from;
  return false;
}

size_t TfRecordReader::Poll(ByteSource& src, const std::function<void(std::string_view)>& on_record) {
  uint64_t size = src.Size();
  if (!started_) {
    started_ = true;
    if (size > options_.tail_bytes) {
      offset_ = size - options_.tail_bytes;
      syncing_ = true;
      stats_.resyncs++;
    }
  }
  if (size < offset_) {  // truncated or replaced: start over
    offset_ = 0;
    syncing_ = false;
  }
  size_t delivered = 0;
  std::string data;
  for (;;) {
    if (syncing_) {
      if (!Resync(src, size, offset_)) break;
    }
    uint64_t next = 0;
    Step s = TryAt(src, size, offset_, &data, &next);
    if (s == Step::kNeedMore) break;
    if (s == Step::kCorrupt) {
      stats_.corrupt++;
      stats_.resyncs++;
      syncing_ = true;
      offset_ += 1;
      continue;
    }
    offset_ = next;
    if (s == Step::kSkipped) {
      stats_.skipped_large++;
      continue;
    }
    stats_.records++;
    ++delivered;
    on_record(data);
  }
  return delivered;
}

}  // namespace mt::exporter
