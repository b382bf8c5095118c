// Incremental TFRecord reader for a file that is still being written.
//
// Framing (little-endian): uint64 length, uint32 masked CRC-32C of the length bytes,
// `length` data bytes, uint32 masked CRC-32C of the data. Both CRCs are checked. A
// record that is not completely written yet stops the read; the next Poll() continues
// from the same offset. After corruption, or after starting in the middle of a file
// (the reader tails the last `tail_bytes`), it resynchronises on the next offset whose
// length CRC and data CRC both verify.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace mt::exporter {

// Where the bytes come from: a file (ReadAt on an fd) or memory (tests, fuzzing).
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t Size() = 0;
  // Reads exactly n bytes at offset; false if not available.
  virtual bool ReadAt(uint64_t offset, size_t n, char* out) = 0;
};

// A file read through a 64 KiB window, so that the byte-by-byte resync scan costs
// memory reads, not system calls. The file stays open: a deleted file keeps reading.
class FileSource : public ByteSource {
 public:
  explicit FileSource(const std::string& path);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  bool ok() const { return fd_ >= 0; }
  uint64_t Size() override;
  bool ReadAt(uint64_t offset, size_t n, char* out) override;
  // True once the path no longer names this file (st_nlink == 0).
  bool Deleted();

 private:
  static constexpr size_t kWindow = 65536;
  int fd_ = -1;
  uint64_t size_ = 0;
  uint64_t window_start_ = 0;
  size_t window_len_ = 0;
  char window_[kWindow];
};

class StringSource : public ByteSource {
 public:
  explicit StringSource(std::string data) : data_(std::move(data)) {}
  uint64_t Size() override { return data_.size(); }
  bool ReadAt(uint64_t offset, size_t n, char* out) override;
  std::string& data() { return data_; }

 private:
  std::string data_;
};

struct TfRecordStats {
  uint64_t records = 0;
  uint64_t corrupt = 0;        // CRC mismatches (length or data)
  uint64_t resyncs = 0;        // times the reader had to search for a record boundary
  uint64_t skipped_large = 0;  // records over max_record_bytes, skipped unread
};

class TfRecordReader {
 public:
  struct Options {
    uint64_t max_record_bytes = 100000;  // larger records (graphs, images) are skipped
    uint64_t tail_bytes = 1u << 20;      // on the first poll, start this far from the end
  };
  TfRecordReader() : TfRecordReader(Options{}) {}
  explicit TfRecordReader(Options o) : options_(o) {}

  // Reads every complete record after the current offset; calls on_record(data) for
  // each one that verifies. Returns the number of records delivered.
  size_t Poll(ByteSource& src, const std::function<void(std::string_view)>& on_record);

  uint64_t offset() const { return offset_; }
  const TfRecordStats& stats() const { return stats_; }

 private:
  enum class Step { kRecord, kNeedMore, kCorrupt, kSkipped };
  Step TryAt(ByteSource& src, uint64_t size, uint64_t at, std::string* data, uint64_t* next);
  // Finds the next verified record boundary at or after `from`; false: none yet.
  bool Resync(ByteSource& src, uint64_t size, uint64_t from);

  Options options_;
  bool started_ = false;
  bool syncing_ = false;
  uint64_t offset_ = 0;
  TfRecordStats stats_;
};

}  // namespace mt::exporter
