// CRC-32C (Castagnoli), as used by TFRecord framing, and TFRecord's "masked" form.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mt::exporter {

uint32_t Crc32c(const void* data, size_t n);

// TFRecord stores ((crc >> 15) | (crc << 17)) + 0xa282ead8 so that a CRC of data that
// itself contains CRCs stays well distributed.
inline uint32_t MaskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace mt::exporter
