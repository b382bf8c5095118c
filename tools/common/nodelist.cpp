#include "tools/common/nodelist.h"

#include <charconv>

namespace mt::tools {
namespace {

bool ParseUint(std::string_view s, long long* out) {
  if (s.empty() || s.size() > 12) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && *out >= 0;
}

std::string Pad(long long v, size_t width) {
  std::string s = std::to_string(v);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

// Splits at commas that are not inside brackets.
std::vector<std::string_view> TopLevelItems(std::string_view list, bool* ok) {
  std::vector<std::string_view> items;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    char c = list[i];
    if (c == '[') {
      if (++depth > 1) *ok = false;
    } else if (c == ']') {
      if (--depth < 0) *ok = false;
    } else if (c == ',' && depth == 0) {
      items.push_back(list.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) *ok = false;
  items.push_back(list.substr(start));
  return items;
}

}  // namespace

std::optional<std::vector<std::string>> ExpandNodelist(std::string_view list, size_t limit) {
  while (!list.empty() && (list.back() == ' ' || list.back() == '\r')) list.remove_suffix(1);
  while (!list.empty() && list.front() == ' ') list.remove_prefix(1);
  if (list.empty()) return std::nullopt;
  bool ok = true;
  auto items = TopLevelItems(list, &ok);
  if (!ok) return std::nullopt;
  std::vector<std::string> hosts;
  for (std::string_view item : items) {
    if (item.empty()) return std::nullopt;
    size_t open = item.find('[');
    if (open == std::string_view::npos) {
      hosts.emplace_back(item);
    } else {
      size_t close = item.find(']', open);
      if (close == std::string_view::npos || item.find('[', close) != std::string_view::npos)
        return std::nullopt;
      std::string_view prefix = item.substr(0, open), suffix = item.substr(close + 1);
      std::string_view ranges = item.substr(open + 1, close - open - 1);
      size_t start = 0;
      while (start <= ranges.size()) {
        size_t comma = ranges.find(',', start);
        std::string_view r = ranges.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
        size_t dash = r.find('-');
        std::string_view lo_s = r.substr(0, dash);
        std::string_view hi_s = dash == std::string_view::npos ? lo_s : r.substr(dash + 1);
        long long lo, hi;
        if (!ParseUint(lo_s, &lo) || !ParseUint(hi_s, &hi) || hi < lo) return std::nullopt;
        if (static_cast<size_t>(hi - lo) + hosts.size() >= limit) return std::nullopt;
        for (long long v = lo; v <= hi; ++v)
          hosts.push_back(std::string(prefix) + Pad(v, lo_s.size()) + std::string(suffix));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
    }
    if (hosts.size() > limit) return std::nullopt;
  }
  return hosts;
}

}  // namespace mt::tools
