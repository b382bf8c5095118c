// The one place untrusted JSON text becomes a Json value (both transports use it).
//
// nlohmann's parser itself is iterative, but much of what happens to a value afterwards is
// not: copies, dump(), schema validation and comparisons recurse once per nesting level, so
// ~150,000 nested arrays in a 300 KB request overflow the stack. Depth is therefore bounded
// here, while parsing, before any value exists. Duplicate object keys are refused too: with
// nlohmann the last one wins, so `{"name":"list_jobs","name":"submit_job"}` would run a
// different tool than a reader (or a proxy, or a log) sees.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "mcp/json.h"

namespace mt::mcp {

struct JsonLimits {
  std::size_t max_bytes = 4 * 1024 * 1024;   // the text itself
  std::size_t max_depth = 64;                // nested arrays/objects; MCP messages need < 10
};

// Outcome of ParseUntrustedJson: `error` is empty on success; otherwise it says exactly
// what was wrong (too large, too deep at byte N, duplicate key "k", not JSON at byte N).
struct JsonParseResult {
  Json value;
  std::string error;
  bool ok() const { return error.empty(); }
};

JsonParseResult ParseUntrustedJson(std::string_view text, const JsonLimits& limits = {});

}  // namespace mt::mcp
