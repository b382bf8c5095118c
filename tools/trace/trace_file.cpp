#include "tools/trace/trace_file.h"

namespace mt::tools::trace {

std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    auto b = static_cast<unsigned char>(s[i]);
    size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    if (ok && n == 2) ok = b >= 0xC2;                                   // no overlong forms
    if (ok && n == 3) {
      auto c = static_cast<unsigned char>(s[i + 1]);
      ok = !(b == 0xE0 && c < 0xA0) && !(b == 0xED && c >= 0xA0);       // overlong, surrogates
    }
    if (ok && n == 4) {
      auto c = static_cast<unsigned char>(s[i + 1]);
      ok = b <= 0xF4 && !(b == 0xF0 && c < 0x90) && !(b == 0xF4 && c >= 0x90);
    }
    if (ok) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

uint32_t StringPool::Intern(std::string_view s) {
  auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  auto id = static_cast<uint32_t>(strings_.size());
  strings_.push_back(ValidUtf8(s));   // looked up by the bytes read, stored repaired
  ids_.emplace(std::string(s), id);
  return id;
}

}  // namespace mt::tools::trace
