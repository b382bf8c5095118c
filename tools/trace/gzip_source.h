// A file read through zlib, gzip or plain (zlib tells them apart by the magic bytes, not by
// the name), as a RapidJSON input stream: Peek/Take/Tell over buffers that a reader thread
// fills ahead (so inflating overlaps parsing on a second core; memory stays at a few
// buffers). A read error or a truncated gzip member ends the stream (Peek returns '\0')
// and is kept in error(), so the caller reports the file's fault rather than the parser's.
#pragma once
#include <zlib.h>

#include <condition_variable>
#include <cstdint>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace mt::tools::trace {

class GzipSource {
 public:
  using Ch = char;
  // Opens `path`; check open_error() before reading.
  // Reading stops (as a clean end, with over_cap()) after `max_bytes` of output.
  explicit GzipSource(const std::string& path, uint64_t max_bytes = UINT64_MAX, size_t buffer_bytes = 1 << 20);
  ~GzipSource();
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;

  const std::string& open_error() const { return open_error_; }
  const std::string& error() const { return error_; }   // empty: no read error so far
  bool compressed() const { return compressed_; }
  bool over_cap() const { return over_cap_; }

  // RapidJSON's stream concept (input only).
  Ch Peek() {
    if (pos_ == cur_.size()) Refill();
    return pos_ == cur_.size() ? '\0' : cur_[pos_];
  }
  Ch Take() {
    if (pos_ == cur_.size()) Refill();
    if (pos_ == cur_.size()) return '\0';
    ++consumed_;
    return cur_[pos_++];
  }
  size_t Tell() const { return consumed_; }
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  size_t PutEnd(Ch*) { return 0; }

 private:
  void Refill();       // the parser's side: the next filled buffer, or the end
  void ReadAhead();    // the reader thread

  gzFile file_ = nullptr;
  uint64_t max_bytes_;
  size_t buffer_bytes_;
  bool over_cap_ = false;          // the parser's copy, set at the end
  bool read_over_cap_ = false;     // the reader's, under mu_
  uint64_t read_bytes_ = 0;        // the reader's own count
  std::vector<char> cur_;          // the buffer being parsed
  size_t pos_ = 0, consumed_ = 0;
  bool compressed_ = false, ended_ = false;
  std::string open_error_, error_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<char>> filled_, spare_;
  bool done_ = false, stop_ = false;   // reader finished / asked to stop
  bool saw_data_ = false;              // the reader's own: a first buffer was read
  std::string read_error_;             // set by the reader before done_
  std::thread reader_;
};

}  // namespace mt::tools::trace
