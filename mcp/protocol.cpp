#include "mcp/protocol.h"

#include <algorithm>
#include <array>

namespace mt::mcp {

const std::vector<std::string>& LegacyVersions() {
  static const std::vector<std::string> v = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
  return v;
}

const std::vector<std::string>& ModernVersions() {
  static const std::vector<std::string> v = {std::string(kModernVersion)};
  return v;
}

bool IsLegacyVersion(std::string_view v) {
  const auto& l = LegacyVersions();
  return std::find(l.begin(), l.end(), v) != l.end();
}

bool IsModernVersion(std::string_view v) {
  const auto& m = ModernVersions();
  return std::find(m.begin(), m.end(), v) != m.end();
}

namespace {
constexpr std::array<const char*, 8> kLevelNames = {"debug", "info",     "notice", "warning",
                                                    "error", "critical", "alert",  "emergency"};
}

bool ParseLogLevel(std::string_view name, LogLevel* out) {
  for (size_t i = 0; i < kLevelNames.size(); ++i) {
    if (name == kLevelNames[i]) {
      *out = static_cast<LogLevel>(i);
      return true;
    }
  }
  return false;
}

const char* LogLevelName(LogLevel level) { return kLevelNames[static_cast<size_t>(level)]; }

}  // namespace mt::mcp
