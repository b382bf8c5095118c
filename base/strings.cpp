#include "base/strings.h"

namespace mt::base {

std::string_view Trim(std::string_view text, std::string_view chars) {
  const size_t b = text.find_first_not_of(chars);
  if (b == std::string_view::npos) return {};
  return text.substr(b, text.find_last_not_of(chars) - b + 1);
}

}  // namespace mt::base
