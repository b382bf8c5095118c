// Scan results kept between calls, keyed by file identity (device, inode) and checked
// against size and mtime: an unchanged log is answered from memory, a log that only grew
// is scanned from where the last pass stopped, anything else is scanned again.
// Thread-safe; concurrent requests for the same file may both scan (the last one wins).
#pragma once
#include <cstdint>
#include <filesystem>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "tools/logs/log_scanner.h"

namespace mt::tools {

struct CachedScan {
  LogScan scan;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  bool changed_during_read = false;   // the file grew or shrank while it was read
};

struct ScanHandle {
  std::shared_ptr<const CachedScan> data;   // shared with the cache: never copied
  bool from_cache = false;     // answered without reading the file
  bool incremental = false;    // only bytes appended since the last scan were read
};

class ScanCache {
 public:
  explicit ScanCache(size_t max_entries = 16) : max_entries_(max_entries) {}

  // Throws std::runtime_error (from ScanFile) when the file cannot be read.
  ScanHandle Get(const std::filesystem::path& path);

  // The process-wide cache used by the tools.
  static ScanCache& Shared();

 private:
  struct Entry {
    std::shared_ptr<const CachedScan> result;
    std::shared_ptr<const LogScanner> state;   // positioned after the last complete line
    uint64_t inode = 0, device = 0;
    std::string tail;                          // the bytes just before state->offset()
  };
  size_t max_entries_;
  std::mutex mu_;
  std::list<std::string> lru_;                 // most recent first
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace mt::tools
