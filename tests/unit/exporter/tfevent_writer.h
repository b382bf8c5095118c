// Test-side TFEvent writer: encodes Event protobufs by hand and frames them as TFRecords
// with masked CRC-32C, producing the bytes tensorboardX / TensorFlow write. Kept in the
// tests so the exporter never depends on the launcher's encoder.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "exporter/crc32c.h"

namespace mt::exporter::testing {

inline void PutVarint(std::string& o, uint64_t v) {
  while (v >= 0x80) {
    o += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  o += static_cast<char>(v);
}
inline void PutKey(std::string& o, int field, int type) { PutVarint(o, (static_cast<uint64_t>(field) << 3) | type); }
inline void PutFixed64(std::string& o, uint64_t v) {
  for (int i = 0; i < 8; ++i) o += static_cast<char>((v >> (8 * i)) & 0xff);
}
inline void PutFixed32(std::string& o, uint32_t v) {
  for (int i = 0; i < 4; ++i) o += static_cast<char>((v >> (8 * i)) & 0xff);
}
inline void PutBytes(std::string& o, int field, const std::string& b) {
  PutKey(o, field, 2);
  PutVarint(o, b.size());
  o += b;
}
inline void PutDouble(std::string& o, int field, double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  PutKey(o, field, 1);
  PutFixed64(o, b);
}
inline void PutFloat(std::string& o, int field, float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  PutKey(o, field, 5);
  PutFixed32(o, b);
}

// Summary.Value with simple_value (what tensorboardX add_scalar writes).
inline std::string SimpleValue(const std::string& tag, float v) {
  std::string o;
  PutBytes(o, 1, tag);
  PutFloat(o, 2, v);
  return o;
}

// Summary.Value with a scalar tensor and the "scalars" plugin (tf.summary v2 style).
inline std::string TensorValue(const std::string& tag, double v, const std::string& plugin = "scalars") {
  std::string tensor;
  PutKey(tensor, 1, 0);
  PutVarint(tensor, 2);            // DT_DOUBLE
  PutBytes(tensor, 2, "");         // scalar shape
  PutDouble(tensor, 6, v);         // double_val (unpacked form)
  std::string plugin_data, meta;
  PutBytes(plugin_data, 1, plugin);
  PutBytes(meta, 1, plugin_data);
  std::string o;
  PutBytes(o, 1, tag);
  PutBytes(o, 9, meta);
  PutBytes(o, 8, tensor);
  return o;
}

inline std::string Event(double wall_time, int64_t step, const std::vector<std::string>& values) {
  std::string summary;
  for (const auto& v : values) PutBytes(summary, 1, v);
  std::string o;
  PutDouble(o, 1, wall_time);
  PutKey(o, 2, 0);
  PutVarint(o, static_cast<uint64_t>(step));
  if (!values.empty()) PutBytes(o, 5, summary);
  return o;
}

inline std::string FileVersionEvent(double wall_time) {
  std::string o;
  PutDouble(o, 1, wall_time);
  PutBytes(o, 3, "brain.Event:2");
  return o;
}

inline std::string Record(const std::string& data) {
  std::string o, len;
  PutFixed64(len, data.size());
  o += len;
  PutFixed32(o, MaskCrc(Crc32c(len.data(), len.size())));
  o += data;
  PutFixed32(o, MaskCrc(Crc32c(data.data(), data.size())));
  return o;
}

}  // namespace mt::exporter::testing
