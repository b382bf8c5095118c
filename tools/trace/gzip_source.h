// A file read through zlib, gzip or plain (zlib tells them apart by the magic bytes, not by
// the name), as a RapidJSON input stream: Peek/Take/Tell over a buffer refilled by gzread.
// A read error or a truncated gzip member ends the stream (Peek returns '\0') and is kept
// in error(), so the caller reports the file's fault rather than the JSON parser's.
#pragma once
#include <zlib.h>

#include <cstddef>
#include <string>
#include <vector>

namespace mt::tools::trace {

class GzipSource {
 public:
  using Ch = char;
  // Opens `path`; check open_error() before reading.
  explicit GzipSource(const std::string& path, size_t buffer_bytes = 1 << 20);
  ~GzipSource();
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;

  const std::string& open_error() const { return open_error_; }
  const std::string& error() const { return error_; }   // empty: no read error so far
  bool compressed() const { return compressed_; }

  // RapidJSON's stream concept (input only).
  Ch Peek() {
    if (pos_ == end_) Refill();
    return pos_ == end_ ? '\0' : buf_[pos_];
  }
  Ch Take() {
    if (pos_ == end_) Refill();
    if (pos_ == end_) return '\0';
    ++consumed_;
    return buf_[pos_++];
  }
  size_t Tell() const { return consumed_; }
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  size_t PutEnd(Ch*) { return 0; }

 private:
  void Refill();
  gzFile file_ = nullptr;
  std::vector<char> buf_;
  size_t pos_ = 0, end_ = 0, consumed_ = 0;
  bool eof_ = false, compressed_ = false;
  std::string open_error_, error_;
};

}  // namespace mt::tools::trace
