// GPU-related kernel errors from /dev/kmsg: records of priority <= 4 (warning or worse)
// whose text mentions amdgpu, drm or xgmi together with error, fault, fail, reset or
// timeout (case-insensitive).
//
// Unlike the original plugin, which re-read the ring buffer and so could go down when
// the buffer rotated, the file stays open and every record is counted once: the counter
// only grows (records already in the buffer at start are counted on the first scrape).
#pragma once

#include <cstdint>
#include <string>

#include "exporter/collector.h"
#include "exporter/root_fs.h"

namespace mt::exporter {

// True if one kmsg record ("<prefix>,<seq>,<ts>,<flags>;<text>") is a GPU error.
bool IsGpuErrorRecord(std::string_view record);

class KmsgCollector : public Collector {
 public:
  explicit KmsgCollector(const RootFs& fs) : fs_(fs) {}
  ~KmsgCollector() override;
  std::string_view name() const override { return "kmsg"; }
  bool Collect(MetricSink& sink) override;

 private:
  void Drain();

  const RootFs& fs_;
  int fd_ = -1;
  bool unreadable_ = false;  // permanently gave up (no permission, no device)
  uint64_t count_ = 0;
  std::string partial_;  // an unterminated line from a regular-file fixture
};

}  // namespace mt::exporter
