#include "base/hostlist.h"

#include <cctype>
#include <charconv>

namespace mt::base {
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

// Appends prefix<lo..hi>suffix for each range of "001-003,010"; false when malformed or
// past `limit`.
bool ExpandRanges(std::string_view prefix, std::string_view ranges, std::string_view suffix, size_t limit,
                  std::vector<std::string>* hosts) {
  size_t start = 0;
  while (start <= ranges.size()) {
    size_t comma = ranges.find(',', start);
    std::string_view r = ranges.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    size_t dash = r.find('-');
    std::string_view lo_s = r.substr(0, dash);
    std::string_view hi_s = dash == std::string_view::npos ? lo_s : r.substr(dash + 1);
    long long lo, hi;
    if (!ParseUint(lo_s, &lo) || !ParseUint(hi_s, &hi) || hi < lo) return false;
    if (static_cast<size_t>(hi - lo) + hosts->size() >= limit) return false;
    for (long long v = lo; v <= hi; ++v)
      hosts->push_back(std::string(prefix) + Pad(v, lo_s.size()) + std::string(suffix));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return true;
}

struct Split {
  std::string prefix;
  std::string digits;
};

Split SplitHost(const std::string& h) {
  size_t i = h.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(h[i - 1]))) --i;
  return {h.substr(0, i), h.substr(i)};
}

// "2801-2803,2810" for sorted-as-given numbers of one width.
std::string Ranges(const std::vector<long long>& nums, size_t width) {
  std::string ranges;
  for (size_t k = 0; k < nums.size();) {
    size_t m = k;
    while (m + 1 < nums.size() && nums[m + 1] == nums[m] + 1) ++m;
    if (!ranges.empty()) ranges += ",";
    ranges += Pad(nums[k], width);
    if (m > k) ranges += "-" + Pad(nums[m], width);
    k = m + 1;
  }
  return ranges;
}

}  // namespace

std::optional<std::vector<std::string>> ExpandHostList(std::string_view list, size_t limit) {
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
      if (!ExpandRanges(item.substr(0, open), item.substr(open + 1, close - open - 1), item.substr(close + 1), limit,
                        &hosts))
        return std::nullopt;
    }
    if (hosts.size() > limit) return std::nullopt;
  }
  return hosts;
}

bool ExpandHostList(std::string_view list, std::vector<std::string>* out) {
  auto hosts = ExpandHostList(list);
  if (!hosts) return false;
  *out = std::move(*hosts);
  return true;
}

std::string CompactHostList(const std::vector<std::string>& hosts) {
  std::string out;
  size_t i = 0;
  while (i < hosts.size()) {
    Split first = SplitHost(hosts[i]);
    if (!out.empty()) out += ",";
    if (first.digits.empty() || first.digits.size() > 12) {
      out += hosts[i++];
      continue;
    }
    std::vector<long long> nums;
    size_t j = i;
    for (; j < hosts.size(); ++j) {
      Split s = SplitHost(hosts[j]);
      if (s.prefix != first.prefix || s.digits.size() != first.digits.size()) break;
      nums.push_back(std::stoll(s.digits));
    }
    out += nums.size() == 1 ? hosts[i] : first.prefix + "[" + Ranges(nums, first.digits.size()) + "]";
    i = j;
  }
  return out;
}

}  // namespace mt::base
