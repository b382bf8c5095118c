// Small string helpers every layer needs, so that none writes its own.
#pragma once
#include <string_view>

namespace mt::base {

inline constexpr std::string_view kAsciiSpace = " \t\n\r\v\f";

// `text` without the leading and trailing characters of `chars` (ASCII white space unless
// told: HTTP's optional white space, for one, is only " \t").
std::string_view Trim(std::string_view text, std::string_view chars = kAsciiSpace);

}  // namespace mt::base
