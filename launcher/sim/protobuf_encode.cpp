#include "launcher/sim/protobuf_encode.h"

#include <cstring>

namespace mt::launch::sim {

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void PutTag(std::string& out, int field, int wire_type) {
  PutVarint(out, (static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
}

void PutFixed(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

void PutDouble(std::string& out, int field, double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  PutTag(out, field, 1);
  PutFixed(out, bits, 8);
}

void PutBytes(std::string& out, int field, std::string_view bytes) {
  PutTag(out, field, 2);
  PutVarint(out, bytes.size());
  out.append(bytes);
}

void PutVarintField(std::string& out, int field, uint64_t v) {
  PutTag(out, field, 0);
  PutVarint(out, v);
}

}  // namespace mt::launch::sim
