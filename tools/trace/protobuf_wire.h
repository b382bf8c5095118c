// Walking the protobuf wire format over a byte range, bounds-checked: varints (at most 10
// bytes), fixed32/64, length-delimited fields whose length must fit what is left. Enough to
// read an XSpace without generated code or a dependency on the .proto. Every fault sets
// error() with the byte offset and stops the walk; nothing reads past the range.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace mt::tools::trace {

class WireCursor {
 public:
  // `base` is the offset of `data` in the file, for error messages.
  WireCursor(const uint8_t* data, size_t size, size_t base = 0) : p_(data), end_(data + size), base_(base), start_(data) {}

  bool done() const { return p_ >= end_ || failed_; }
  bool failed() const { return failed_; }
  const std::string& error() const { return error_; }
  size_t offset() const { return base_ + static_cast<size_t>(p_ - start_); }

  // The next field's number and wire type; false at the end or on a fault.
  bool Next(uint32_t* field, uint32_t* wire_type) {
    if (done()) return false;
    uint64_t key = 0;
    if (!Varint(&key)) return false;
    *field = static_cast<uint32_t>(key >> 3);
    *wire_type = static_cast<uint32_t>(key & 7);
    if (*field == 0) return Fail("field number 0");
    return true;
  }

  bool Varint(uint64_t* v) {
    uint64_t out = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (p_ >= end_) return Fail("a varint runs past the end of its message");
      uint8_t b = *p_++;
      if (shift == 63 && b > 1) return Fail("a varint longer than 64 bits");
      out |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        *v = out;
        return true;
      }
    }
    return Fail("a varint longer than 10 bytes");
  }

  bool Fixed64(uint64_t* v) {
    if (end_ - p_ < 8) return Fail("a fixed64 runs past the end of its message");
    std::memcpy(v, p_, 8);
    p_ += 8;
    return true;
  }

  // A length-delimited field's bytes, as a cursor of their own.
  bool Bytes(WireCursor* inner) {
    uint64_t n = 0;
    if (!Varint(&n)) return false;
    if (n > static_cast<uint64_t>(end_ - p_)) return Fail("a field of " + std::to_string(n) + " bytes runs past the end of its message");
    *inner = WireCursor(p_, static_cast<size_t>(n), offset());
    p_ += n;
    return true;
  }
  bool String(std::string_view* s) {
    WireCursor inner(nullptr, 0);
    if (!Bytes(&inner)) return false;
    *s = std::string_view(reinterpret_cast<const char*>(inner.p_), static_cast<size_t>(inner.end_ - inner.p_));
    return true;
  }

  // Skips a field of `wire_type` (groups, types 3 and 4, are refused: XSpace has none).
  bool Skip(uint32_t wire_type) {
    uint64_t v = 0;
    WireCursor inner(nullptr, 0);
    switch (wire_type) {
      case 0: return Varint(&v);
      case 1: return Fixed64(&v);
      case 2: return Bytes(&inner);
      case 5:
        if (end_ - p_ < 4) return Fail("a fixed32 runs past the end of its message");
        p_ += 4;
        return true;
      default: return Fail("wire type " + std::to_string(wire_type) + " (not used by XSpace)");
    }
  }

  bool Fail(const std::string& why) {
    if (!failed_) {
      failed_ = true;
      error_ = why + " at byte " + std::to_string(offset());
    }
    return false;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
  size_t base_;
  const uint8_t* start_;
  bool failed_ = false;
  std::string error_;
};

}  // namespace mt::tools::trace
