#pragma once

namespace mt::exporter {
inline constexpr const char* kVersion = "0.1.0";
}  // namespace mt::exporter
