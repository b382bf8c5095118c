#include "mcp/tool.h"

#include <iostream>

#include "mcp/schema_validator.h"

namespace mt::mcp {

Json ToolAnnotations::ToJson(const std::string& title) const {
  Json a = Json::object();
  if (!title.empty()) a["title"] = title;
  if (read_only) a["readOnlyHint"] = *read_only;
  if (destructive) a["destructiveHint"] = *destructive;
  if (idempotent) a["idempotentHint"] = *idempotent;
  if (open_world) a["openWorldHint"] = *open_world;
  return a;
}

ToolResult ToolResult::Text(std::string text) {
  ToolResult r;
  Json block(Json::value_t::object);
  block["type"] = "text";
  block["text"] = std::move(text);
  r.content.push_back(std::move(block));
  return r;
}

ToolResult ToolResult::Structured(Json structured, std::string summary) {
  ToolResult r = Text(std::move(summary));
  r.structured = std::move(structured);
  return r;
}

ToolResult ToolResult::Error(std::string message) {
  ToolResult r = Text(std::move(message));
  r.is_error = true;
  return r;
}

Json Tool::ToJson() const {
  Json t = {{"name", name}, {"description", description}, {"inputSchema", input_schema}};
  if (!title.empty()) t["title"] = title;
  if (!output_schema.is_null()) t["outputSchema"] = output_schema;
  Json a = annotations.ToJson(title);
  if (!a.empty()) t["annotations"] = std::move(a);
  if (!meta.is_null()) t["_meta"] = meta;
  return t;
}

std::optional<std::string> CheckToolArguments(const Tool& tool, const Json& arguments) {
  if (!arguments.is_object()) return "Invalid arguments: arguments must be an object";
  if (auto err = ValidateSchema(tool.input_schema, arguments, "arguments")) return "Invalid arguments: " + *err;
  return std::nullopt;
}

ToolResult CheckToolOutput(const Tool& tool, ToolResult r) {
  if (r.structured && !tool.output_schema.is_null() && !r.is_error) {
    if (auto err = ValidateSchema(tool.output_schema, *r.structured, "structuredContent")) {
      std::cerr << "mt: tool " << tool.name << " returned output that violates its outputSchema: " << *err << "\n";
      r = ToolResult::Error("internal error: tool " + tool.name + " produced output that violates its outputSchema (" +
                            *err + ")");
    }
  }
  return r;
}

}  // namespace mt::mcp
