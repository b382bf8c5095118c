#include "launcher/sim/hostlist.h"

#include <cctype>
#include <cstdio>
#include <map>

namespace mt::launch::sim {
namespace {

struct Split {
  std::string prefix;
  std::string digits;
};

Split SplitHost(const std::string& h) {
  size_t i = h.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(h[i - 1]))) --i;
  return {h.substr(0, i), h.substr(i)};
}

std::string Pad(long v, size_t width) {
  std::string s = std::to_string(v);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

}  // namespace

std::string CompactHostList(const std::vector<std::string>& hosts) {
  // Group consecutive hosts with the same prefix and digit width.
  std::string out;
  size_t i = 0;
  while (i < hosts.size()) {
    Split first = SplitHost(hosts[i]);
    if (first.digits.empty()) {
      if (!out.empty()) out += ",";
      out += hosts[i++];
      continue;
    }
    std::vector<long> nums;
    size_t j = i;
    for (; j < hosts.size(); ++j) {
      Split s = SplitHost(hosts[j]);
      if (s.prefix != first.prefix || s.digits.size() != first.digits.size()) break;
      nums.push_back(std::stol(s.digits));
    }
    const size_t width = first.digits.size();
    std::string ranges;
    for (size_t k = 0; k < nums.size();) {
      size_t m = k;
      while (m + 1 < nums.size() && nums[m + 1] == nums[m] + 1) ++m;
      if (!ranges.empty()) ranges += ",";
      ranges += Pad(nums[k], width);
      if (m > k) ranges += "-" + Pad(nums[m], width);
      k = m + 1;
    }
    if (!out.empty()) out += ",";
    if (nums.size() == 1) {
      out += hosts[i];
    } else {
      out += first.prefix + "[" + ranges + "]";
    }
    i = j;
  }
  return out;
}

bool ExpandHostList(const std::string& compact, std::vector<std::string>* out) {
  out->clear();
  size_t i = 0;
  while (i < compact.size()) {
    size_t end = i;
    int depth = 0;
    while (end < compact.size() && (depth > 0 || compact[end] != ',')) {
      if (compact[end] == '[') ++depth;
      if (compact[end] == ']') --depth;
      if (depth < 0 || depth > 1) return false;
      ++end;
    }
    if (depth != 0) return false;
    std::string item = compact.substr(i, end - i);
    if (item.empty()) return false;
    size_t lb = item.find('[');
    if (lb == std::string::npos) {
      out->push_back(item);
    } else {
      if (item.back() != ']') return false;
      std::string prefix = item.substr(0, lb);
      std::string body = item.substr(lb + 1, item.size() - lb - 2);
      size_t p = 0;
      while (p <= body.size()) {
        size_t comma = body.find(',', p);
        if (comma == std::string::npos) comma = body.size();
        std::string range = body.substr(p, comma - p);
        size_t dash = range.find('-');
        std::string a = range.substr(0, dash);
        std::string b = dash == std::string::npos ? a : range.substr(dash + 1);
        if (a.empty() || b.empty() || a.size() > 9 || b.size() > 9) return false;
        for (char c : a + b)
          if (!std::isdigit(static_cast<unsigned char>(c))) return false;
        long lo = std::stol(a), hi = std::stol(b);
        if (hi < lo || hi - lo > 100000) return false;
        for (long v = lo; v <= hi; ++v) out->push_back(prefix + Pad(v, a.size()));
        p = comma + 1;
      }
    }
    i = end + 1;
  }
  return !out->empty();
}

}  // namespace mt::launch::sim
