// libFuzzer target: the log scanner's state machine on arbitrary log bytes, fed the way
// ScanFile feeds it (chunks, an unfinished last line offered again, EOF), plus the
// continuation merge that parallel scans use.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "tools/logs/log_scanner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using mt::tools::LogScanner;
  const char* p = reinterpret_cast<const char*>(data);
  LogScanner whole(1767225600);   // 2026-01-01: resolves year-less absl stamps
  std::string pending;
  for (size_t done = 0; done < size;) {   // 97-byte reads: lines split across feeds
    const size_t n = std::min<size_t>(97, size - done);
    pending.append(p + done, n);
    done += n;
    pending.erase(0, whole.Feed(pending.data(), pending.size(), done == size));
    if (pending.size() > 1024 && pending.find('\n') == std::string::npos) {   // a line too long to keep
      whole.FeedLongLinePiece(pending.data(), pending.size());
      pending.clear();
    }
  }
  (void)whole.Result();
  // A continuation starts at a line boundary: just after the first '\n' past the middle.
  const void* nl = size ? memchr(p + size / 2, '\n', size - size / 2) : nullptr;
  if (!nl) return 0;
  const size_t half = size_t(static_cast<const char*>(nl) - p) + 1;
  LogScanner first(1767225600);
  if (first.Feed(p, half, false) != half) return 0;
  LogScanner second = LogScanner::Continuation(1767225600);
  second.Feed(p + half, size - half, true);
  (void)second.Result();
  (void)first.MergeFrom(second);
  (void)first.Result();
  return 0;
}
