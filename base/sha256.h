// SHA-256 as lowercase hex: the plan hash an approval is bound to, the cancel plan's hash,
// the request-state digest and the token fingerprint all use this one function, so the
// same bytes always give the same text everywhere.
#pragma once
#include <string>
#include <string_view>

namespace mt::base {

// 64 lowercase hex digits.
std::string Sha256Hex(std::string_view data);

}  // namespace mt::base
