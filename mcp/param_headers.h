// Custom headers from tool parameters (2026-07-28 Streamable HTTP, SEP-2243): a property of
// a tool's inputSchema marked `"x-mcp-header": "Region"` is mirrored by HTTP clients into an
// `Mcp-Param-Region` header, so that intermediaries can route on it. The server checks that
// header and body agree — an intermediary may have acted on the header while the server is
// about to act on the body — and refuses any disagreement with -32020 (HTTP 400).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mcp/json.h"

namespace mt::mcp {

struct ParamHeader {
  std::vector<std::string> path;   // the chain of `properties` keys from the schema root
  std::string name;                // the x-mcp-header value: the header is "Mcp-Param-" + name
  std::string type;                // string | integer | boolean
};

// The valid annotations of an inputSchema: reachable from the root through `properties`
// keys only, on string, integer or boolean properties, with an RFC 9110 token as name, unique
// case-insensitively. Annotations that break a rule are not enforced (conforming clients
// drop such a tool anyway).
std::vector<ParamHeader> ParamHeaders(const Json& input_schema);

// Checks the Mcp-Param-* headers of a tools/call against its arguments. `header(name)` returns
// the value of header `name` (case-insensitive, surrounding whitespace trimmed) or nullopt.
// Throws RpcError(kHeaderMismatch) when an annotated argument is present (and not null)
// without its header, when a header has no argument or a different value, when a value has
// characters a header may not carry, or when a `=?base64?…?=` value is not valid Base64.
// Integers compare numerically ("42.0" equals 42).
void CheckParamHeaders(const Json& input_schema, const Json& arguments,
                       const std::function<std::optional<std::string>(const std::string&)>& header);

}  // namespace mt::mcp
