// TensorBoard event files: TFRecord framing around tensorflow.Event protobufs.
//
// Only what MaxText's SummaryWriter produces for scalars is encoded:
//   Event   { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
//   Summary { repeated Value value = 1; }
//   Value   { string tag = 1; float simple_value = 2; }
// Each record on disk: uint64 length (LE), uint32 masked CRC-32C of those 8 bytes,
// the payload, uint32 masked CRC-32C of the payload.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mt::launch::sim {

// The protobuf bytes of an Event carrying only wall_time and file_version (the first
// record of every event file; TensorBoard expects "brain.Event:2").
std::string EncodeFileVersionEvent(double wall_time, std::string_view version = "brain.Event:2");

// The protobuf bytes of an Event carrying one scalar summary value.
std::string EncodeScalarEvent(double wall_time, int64_t step, std::string_view tag, float value);

// One TFRecord frame around `payload`.
std::string FrameRecord(std::string_view payload);

// The conventional file name: events.out.tfevents.<epoch seconds>.<hostname>
std::string EventFileName(int64_t epoch_seconds, std::string_view hostname);

// Appends records to an event file. Each Add* call writes whole records, so a reader that
// tails the file never sees more than one partial record at the end.
class TfEventWriter {
 public:
  TfEventWriter() = default;
  ~TfEventWriter();
  TfEventWriter(const TfEventWriter&) = delete;
  TfEventWriter& operator=(const TfEventWriter&) = delete;

  // Creates (truncates) `path` and writes the file_version record; kIo when it cannot.
  base::Status Open(const std::filesystem::path& path, double wall_time);
  // Appends one scalar event (kInvalid when the file is not open, kIo on a write error).
  base::Status AddScalar(double wall_time, int64_t step, std::string_view tag, float value);
  // Pushes buffered records to the OS (real-time mode calls this once per step).
  base::Status Flush();
  base::Status Close();

 private:
  base::Status Write(std::string_view bytes);
  std::FILE* file_ = nullptr;
  std::filesystem::path path_;
};

}  // namespace mt::launch::sim
