// Escaping for HTML text and attribute values (the perf report, the approval page).
#pragma once
#include <string>

namespace mt::tools {

// Escapes &, <, >, " and ' for HTML text and attribute values.
std::string HtmlEscape(const std::string& s);

}  // namespace mt::tools
