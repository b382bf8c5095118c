// Small allocation-free parsing helpers for procfs/sysfs text.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace mt::exporter {

std::string_view Trim(std::string_view s);

// Whitespace-separated fields (spaces and tabs).
std::vector<std::string_view> Fields(std::string_view line);

// Calls fn(line) for every line (without the '\n').
template <typename Fn>
void ForEachLine(std::string_view text, Fn&& fn) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    fn(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

std::optional<uint64_t> ParseU64(std::string_view s);
std::optional<int64_t> ParseI64(std::string_view s);
// Decimal or exponent notation; trims surrounding whitespace.
std::optional<double> ParseDouble(std::string_view s);

// "key value" lines (e.g. /proc/stat, /proc/vmstat): value of the first line whose first
// field equals `key`.
std::optional<uint64_t> FindKeyU64(std::string_view text, std::string_view key);

}  // namespace mt::exporter
