// Validates JSON values against the JSON Schema (2020-12) keywords that MCP tool schemas
// use: type, enum, const, properties, required, additionalProperties, patternProperties,
// items, prefixItems, min/maxItems, uniqueItems, min/maxLength, pattern, minimum, maximum,
// exclusiveMinimum/Maximum, multipleOf, min/maxProperties, allOf, anyOf, oneOf, not,
// if/then/else, and local $ref ("#/$defs/…", "#/definitions/…", "#"). Annotation keywords
// (title, description, default, examples, format, $schema, $id, $comment) are accepted and
// not enforced. No C++ validator is packaged in Debian 12, hence this small one.
#pragma once
#include <optional>
#include <string>

#include "mcp/json.h"

namespace mt::mcp {

// Returns nullopt when `value` conforms, else a message naming the offending location,
// e.g. "arguments.nodes: expected integer, got string". `root_name` prefixes the path.
std::optional<std::string> ValidateSchema(const Json& schema, const Json& value,
                                          const std::string& root_name = "value");

}  // namespace mt::mcp
