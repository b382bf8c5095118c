// Reading a log file into the scanner (log_scanner.h: ScanFile and its resumable and
// parallel forms): blocks read on a helper thread, the file split at a line boundary for two
// scanners, the unfinished last line carried. The line-by-line reading itself is in
// log_scanner.cpp.
#include "tools/logs/log_scanner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "base/workspace_files.h"

namespace mt::tools {

namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string ErrnoText(int err) { return std::strerror(err); }

}  // namespace

namespace {

constexpr size_t kReadBlock = 4 << 20;
constexpr uint64_t kThreadedReadFrom = 32ull << 20;
constexpr size_t kCarryRoom = kMaxLineExamined + 4096;   // room before each block for a carried line
constexpr int kSlots = 3;

// Reads [begin, end) of a file in blocks on a helper thread, so that the kernel's copy
// into user space overlaps with scanning (the scan, not the copy, is the longer part).
class BlockReader {
 public:
  BlockReader(int fd, uint64_t begin, uint64_t end) : fd_(fd), next_(begin), end_(end) {
    for (auto& s : slots_) s.mem.reset(new char[kCarryRoom + kReadBlock]);
    thread_ = std::thread([this] { Run(); });
  }
  ~BlockReader() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // The next block (data starts kCarryRoom bytes into its slot, so the caller may put up
  // to kCarryRoom bytes in front of it). Returns false at the end. Rethrows read errors.
  bool Next(char** data, size_t* n) {
    std::unique_lock<std::mutex> l(mu_);
    if (current_ >= 0) {
      slots_[current_].filled = false;
      cv_.notify_all();
    }
    int want = (current_ + 1) % kSlots;
    cv_.wait(l, [&] { return slots_[want].filled || done_; });
    if (!slots_[want].filled) {
      if (error_) std::rethrow_exception(error_);
      return false;
    }
    current_ = want;
    *data = slots_[want].mem.get() + kCarryRoom;
    *n = slots_[want].size;
    return true;
  }
  bool truncated() const { return truncated_; }

 private:
  struct Slot {
    std::unique_ptr<char[]> mem;
    size_t size = 0;
    bool filled = false;
  };
  void Run() {
    int slot = 0;
    try {
      while (next_ < end_) {
        {
          std::unique_lock<std::mutex> l(mu_);
          cv_.wait(l, [&] { return !slots_[slot].filled || stop_; });
          if (stop_) break;
        }
        char* dst = slots_[slot].mem.get() + kCarryRoom;
        size_t want = static_cast<size_t>(std::min<uint64_t>(kReadBlock, end_ - next_));
        size_t got = 0;
        while (got < want) {
          ssize_t r = ::pread(fd_, dst + got, want - got, static_cast<off_t>(next_ + got));
          if (r < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            throw std::runtime_error(std::string("read error: ") + std::strerror(errno));
          }
          if (r == 0) {
            truncated_ = true;
            break;
          }
          got += static_cast<size_t>(r);
        }
        next_ += got;
        {
          std::lock_guard<std::mutex> l(mu_);
          slots_[slot].size = got;
          slots_[slot].filled = got > 0;
        }
        cv_.notify_all();
        if (truncated_) break;
        slot = (slot + 1) % kSlots;
      }
    } catch (...) {
      std::lock_guard<std::mutex> l(mu_);
      error_ = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      done_ = true;
    }
    cv_.notify_all();
  }

  int fd_;
  uint64_t next_, end_;
  Slot slots_[kSlots];
  int current_ = -1;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, done_ = false;
  std::atomic<bool> truncated_{false};
  std::exception_ptr error_;
  std::thread thread_;
};

// The result including an unfinished last line, which the resumable state must not
// consume (the line may still grow); copies the state only when there is such a line.
LogScan FinalResult(const LogScanner& state, const char* tail, size_t n) {
  if (n == 0) return state.Result();
  LogScanner last = state;
  last.Feed(tail, n, true);
  return last.Result();
}

// Feeds [begin, end) of the file to `scanner` through a BlockReader. Leaves an
// unfinished last line in `carry`; returns whether the file shrank while it was read.
bool FeedBlocks(int fd, const std::filesystem::path& path, uint64_t begin, uint64_t end, LogScanner* scanner,
                std::string* carry) {
  BlockReader reader(fd, begin, end);
  carry->clear();
  char* data;
  size_t n;
  try {
    while (reader.Next(&data, &n)) {
      char* start = data - carry->size();
      std::memcpy(start, carry->data(), carry->size());
      n += carry->size();
      carry->clear();
      size_t used = scanner->Feed(start, n, false);
      size_t rest = n - used;
      if (rest > kMaxLineExamined) {   // a line longer than anyone reads: keep its start only
        scanner->FeedLongLinePiece(start + used, rest);
        rest = 0;
      }
      carry->assign(start + used, rest);
    }
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("cannot read " + path.string() + ": " + e.what());
  }
  return reader.truncated();
}

void ScanBlocks(int fd, const std::filesystem::path& path, uint64_t begin, uint64_t end, FileScan* out) {
  std::string carry;
  out->changed_during_read |= FeedBlocks(fd, path, begin, end, &out->state, &carry);
  out->scan = FinalResult(out->state, carry.data(), carry.size());
}

// First byte after the first '\n' at or after `from` (end when there is none).
uint64_t NextLineStart(int fd, uint64_t from, uint64_t end) {
  char buf[64 * 1024];
  while (from < end) {
    ssize_t r = ::pread(fd, buf, static_cast<size_t>(std::min<uint64_t>(sizeof buf, end - from)), static_cast<off_t>(from));
    if (r <= 0) return end;
    const void* nl = std::memchr(buf, '\n', static_cast<size_t>(r));
    if (nl) return from + static_cast<uint64_t>(static_cast<const char*>(nl) - buf) + 1;
    from += static_cast<uint64_t>(r);
  }
  return end;
}

// Two halves on two threads, merged; the second half is rescanned serially in the rare
// case the first ended inside a multi-line context.
void ScanHalves(int fd, const std::filesystem::path& path, uint64_t size, int64_t reference, FileScan* out) {
  const uint64_t split = NextLineStart(fd, size / 2, size);
  LogScanner second = LogScanner::Continuation(reference);
  std::string second_carry;
  bool second_truncated = false;
  std::exception_ptr second_error;
  std::thread worker([&] {
    try {
      second_truncated = FeedBlocks(fd, path, split, size, &second, &second_carry);
    } catch (...) {
      second_error = std::current_exception();
    }
  });
  std::string first_carry;
  bool first_truncated;
  try {
    first_truncated = FeedBlocks(fd, path, 0, split, &out->state, &first_carry);
  } catch (...) {
    worker.join();
    throw;
  }
  worker.join();
  if (second_error) std::rethrow_exception(second_error);
  // The first half ends at a line boundary unless the file shrank under us.
  bool merged = !first_truncated && first_carry.empty() && out->state.MergeFrom(second);
  if (!merged) {
    std::string carry;
    second_truncated = FeedBlocks(fd, path, out->state.offset(), size, &out->state, &carry);
    second_carry = carry;
  }
  out->changed_during_read |= first_truncated || second_truncated;
  out->scan = FinalResult(out->state, second_carry.data(), second_carry.size());
}

}  // namespace

FileScan ScanFile(const std::filesystem::path& path, const LogScanner* resume, uint64_t parallel_from) {
  // Never open a device (opening some has effects) or wait on a FIFO: stat first, then a
  // non-blocking open, then fstat on the descriptor (base/workspace_files.h's rule).
  if (struct stat pre {}; ::stat(path.c_str(), &pre) == 0 && !S_ISREG(pre.st_mode) && !S_ISDIR(pre.st_mode))
    throw std::runtime_error(path.string() + " is a " + base::TypeName(pre.st_mode) + ", not a regular file");
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (f.fd < 0) {
    int err = errno;
    if (err == ELOOP) throw std::runtime_error("cannot open " + path.string() + ": symbolic link loop");
    throw std::runtime_error("cannot open " + path.string() + ": " + ErrnoText(err));
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw std::runtime_error("cannot stat " + path.string() + ": " + ErrnoText(errno));
  if (S_ISDIR(st.st_mode)) throw std::runtime_error(path.string() + " is a directory, not a log file");
  if (!S_ISREG(st.st_mode))
    throw std::runtime_error(path.string() + " is a " + base::TypeName(st.st_mode) + ", not a regular file");
  int64_t mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  const uint64_t size = static_cast<uint64_t>(st.st_size);

  FileScan out{LogScan{}, resume ? *resume : LogScanner(st.st_mtim.tv_sec), size, mtime_ns,
               static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_dev), false};
  uint64_t off = out.state.offset();
  if (off > size) {   // shrank since the resumable state was taken: start again
    out.state = LogScanner(st.st_mtim.tv_sec);
    off = 0;
  }
  ::posix_fadvise(f.fd, static_cast<off_t>(off), 0, POSIX_FADV_SEQUENTIAL);
  if (off == 0 && size >= parallel_from) {
    ScanHalves(f.fd, path, size, st.st_mtim.tv_sec, &out);
  } else if (size - off >= kThreadedReadFrom) {
    ScanBlocks(f.fd, path, off, size, &out);
  } else {
    std::unique_ptr<char[]> buf(new char[kReadBlock]);
    size_t have = 0;
    uint64_t pos = off;
    while (pos + have < size) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(kReadBlock - have, size - pos - have));
      ssize_t r = ::pread(f.fd, buf.get() + have, want, static_cast<off_t>(pos + have));
      if (r < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        throw std::runtime_error("cannot read " + path.string() + ": " + ErrnoText(errno));
      }
      if (r == 0) {   // truncated while being read
        out.changed_during_read = true;
        break;
      }
      have += static_cast<size_t>(r);
      size_t used = out.state.Feed(buf.get(), have, false);
      if (used == 0 && have == kReadBlock) {
        out.state.FeedLongLinePiece(buf.get(), have);
        used = have;
      }
      pos += used;
      if (used < have) std::memmove(buf.get(), buf.get() + used, have - used);
      have -= used;
    }
    out.scan = FinalResult(out.state, buf.get(), have);
  }
  struct stat after {};
  if (::fstat(f.fd, &after) == 0 &&
      (after.st_size != st.st_size || after.st_mtim.tv_sec != st.st_mtim.tv_sec ||
       after.st_mtim.tv_nsec != st.st_mtim.tv_nsec))
    out.changed_during_read = true;
  return out;
}

}  // namespace mt::tools
