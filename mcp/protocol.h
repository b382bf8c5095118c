// Protocol revisions, eras and the `_meta` keys that carry them.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace mt::mcp {

// Legacy era: initialize handshake, sessions, server→client requests.
// Modern era (2026-07-28): stateless, every request carries its version in `_meta`.
enum class Era { kLegacy, kModern };

inline constexpr std::string_view kModernVersion = "2026-07-28";
inline constexpr std::string_view kLatestLegacyVersion = "2025-11-25";

// Versions this server speaks, newest first.
const std::vector<std::string>& LegacyVersions();
const std::vector<std::string>& ModernVersions();
bool IsLegacyVersion(std::string_view v);
bool IsModernVersion(std::string_view v);


namespace meta {
inline constexpr const char* kProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr const char* kClientCapabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr const char* kClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr const char* kLogLevel = "io.modelcontextprotocol/logLevel";
inline constexpr const char* kServerInfo = "io.modelcontextprotocol/serverInfo";
inline constexpr const char* kSubscriptionId = "io.modelcontextprotocol/subscriptionId";
}  // namespace meta

// RFC 5424 severities as MCP names them, least to most severe.
enum class LogLevel { kDebug, kInfo, kNotice, kWarning, kError, kCritical, kAlert, kEmergency };
bool ParseLogLevel(std::string_view name, LogLevel* out);
const char* LogLevelName(LogLevel level);

}  // namespace mt::mcp
