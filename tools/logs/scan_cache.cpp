#include "tools/logs/scan_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "base/workspace_files.h"

namespace mt::tools {
namespace {

constexpr size_t kTailCheck = 256;   // bytes compared to make sure an append is an append

// Reads [end - len, end) of the file; empty on any error.
std::string ReadBefore(const std::filesystem::path& path, uint64_t end, size_t len) {
  std::string out;
  if (end == 0) return out;
  uint64_t start = end > len ? end - len : 0;
  // Non-blocking and regular files only: the path may have been swapped for a FIFO.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return out;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return out;
  }
  out.resize(static_cast<size_t>(end - start));
  ssize_t r = ::pread(fd, out.data(), out.size(), static_cast<off_t>(start));
  ::close(fd);
  if (r != static_cast<ssize_t>(out.size())) out.clear();
  return out;
}

}  // namespace

ScanCache& ScanCache::Shared() {
  static ScanCache* cache = new ScanCache(16);
  return *cache;
}

ScanHandle ScanCache::Get(const std::filesystem::path& path) {
  const std::string key = path.string();
  struct stat st {};
  bool have_stat = ::stat(path.c_str(), &st) == 0;
  int64_t mtime_ns = have_stat ? static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec : 0;
  std::shared_ptr<const LogScanner> resume;
  std::string expected_tail;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end() && have_stat && it->second.inode == st.st_ino && it->second.device == st.st_dev) {
      const Entry& e = it->second;
      if (e.result->size == static_cast<uint64_t>(st.st_size) && e.result->mtime_ns == mtime_ns) {
        lru_.remove(key);
        lru_.push_front(key);
        return ScanHandle{e.result, true, false};
      }
      if (static_cast<uint64_t>(st.st_size) > e.result->size) {
        resume = e.state;
        expected_tail = e.tail;
      }
    }
  }
  // An append keeps the bytes before the resume point; otherwise scan from the start.
  if (resume && ReadBefore(path, resume->offset(), kTailCheck) != expected_tail) resume.reset();
  // A fresh scan is of a text log only: a file that is mostly binary (random bytes, an
  // image, a core dump) holds no evidence, and scanning it would only produce a confident
  // wrong verdict ("running, training is progressing"). ScanFile itself stays byte-safe.
  if (!resume) {
    if (auto f = base::OpenRegularFile(nullptr, path); f.ok()) {
      base::TextSample sample = base::SampleText(f->fd(), f->size());
      if (!sample.is_text)
        throw std::runtime_error(path.string() + " is not a text log: " + sample.reason +
                                 "; its status is unknown (mt reads text logs only)");
    }
  }
  FileScan fs = ScanFile(path, resume.get());
  auto result = std::make_shared<CachedScan>();
  result->scan = std::move(fs.scan);
  result->size = fs.size;
  result->mtime_ns = fs.mtime_ns;
  result->changed_during_read = fs.changed_during_read;
  if (!fs.changed_during_read) {
    Entry e;
    e.result = result;
    e.state = std::make_shared<LogScanner>(std::move(fs.state));
    e.inode = fs.inode;
    e.device = fs.device;
    e.tail = ReadBefore(path, e.state->offset(), kTailCheck);
    std::lock_guard<std::mutex> lock(mu_);
    entries_[key] = std::move(e);
    lru_.remove(key);
    lru_.push_front(key);
    while (lru_.size() > max_entries_) {
      entries_.erase(lru_.back());
      lru_.pop_back();
    }
  }
  return ScanHandle{result, false, resume != nullptr};
}

}  // namespace mt::tools
