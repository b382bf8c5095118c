// CRC-32C (Castagnoli), as used by the TFRecord framing of TensorBoard event files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace mt::launch::sim {

// CRC-32C of `data` (reflected polynomial 0x82F63B78, init and final xor 0xFFFFFFFF).
uint32_t Crc32c(std::string_view data);

// TFRecord stores CRCs "masked" so that a CRC of data that itself contains CRCs stays
// well distributed: rotate right by 15 bits and add a constant.
inline uint32_t MaskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace mt::launch::sim
