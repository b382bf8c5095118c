#include "launcher/sim/tfevents_writer.h"

#include <cerrno>
#include <cstring>

#include "launcher/sim/crc32c.h"
#include "launcher/sim/protobuf_encode.h"

namespace mt::launch::sim {
using base::Errc;
using base::Status;

std::string EncodeFileVersionEvent(double wall_time, std::string_view version) {
  std::string event;
  PutDouble(event, 1, wall_time);
  PutBytes(event, 3, version);
  return event;
}

std::string EncodeScalarEvent(double wall_time, int64_t step, std::string_view tag, float value) {
  std::string v;
  PutBytes(v, 1, tag);
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  PutTag(v, 2, 5);
  PutFixed(v, bits, 4);

  std::string summary;
  PutBytes(summary, 1, v);

  std::string event;
  PutDouble(event, 1, wall_time);
  PutTag(event, 2, 0);
  PutVarint(event, static_cast<uint64_t>(step));  // negative steps would be 10 bytes, as protobuf does
  PutBytes(event, 5, summary);
  return event;
}

std::string FrameRecord(std::string_view payload) {
  std::string header;
  PutFixed(header, payload.size(), 8);
  std::string out = header;
  PutFixed(out, MaskCrc(Crc32c(header)), 4);
  out.append(payload);
  PutFixed(out, MaskCrc(Crc32c(payload)), 4);
  return out;
}

std::string EventFileName(int64_t epoch_seconds, std::string_view hostname) {
  return "events.out.tfevents." + std::to_string(epoch_seconds) + "." + std::string(hostname);
}

TfEventWriter::~TfEventWriter() { (void)Close(); }

Status TfEventWriter::Open(const std::filesystem::path& path, double wall_time) {
  (void)Close();
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) return Status(Errc::kIo, "cannot create event file " + path.string() + ": " + std::strerror(errno));
  path_ = path;
  return Write(FrameRecord(EncodeFileVersionEvent(wall_time)));
}

Status TfEventWriter::AddScalar(double wall_time, int64_t step, std::string_view tag, float value) {
  if (!file_) return Status(Errc::kInvalid, "event file is not open");
  return Write(FrameRecord(EncodeScalarEvent(wall_time, step, tag, value)));
}

Status TfEventWriter::Flush() {
  if (file_ && std::fflush(file_) != 0) return Status(Errc::kIo, "cannot write " + path_.string() + ": " + std::strerror(errno));
  return Status::Ok();
}

Status TfEventWriter::Close() {
  if (!file_) return Status::Ok();
  Status st;
  if (std::fclose(file_) != 0) st = Status(Errc::kIo, "cannot close " + path_.string() + ": " + std::strerror(errno));
  file_ = nullptr;
  return st;
}

Status TfEventWriter::Write(std::string_view bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
    return Status(Errc::kIo, "cannot write " + path_.string() + ": " + std::strerror(errno));
  return Status::Ok();
}

}  // namespace mt::launch::sim
