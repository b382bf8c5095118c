#include "mcp/typed.h"

#include <algorithm>

namespace mt::mcp::typed_detail {

Json AllowNull(Json schema) {
  if (schema.contains("enum")) {
    if (std::find(schema["enum"].begin(), schema["enum"].end(), Json(nullptr)) == schema["enum"].end())
      schema["enum"].push_back(nullptr);
    return schema;
  }
  auto it = schema.find("type");
  if (it == schema.end()) return schema;   // any value, null included
  if (it->is_string()) {
    *it = Json::array({*it, "null"});
  } else if (it->is_array() && std::find(it->begin(), it->end(), Json("null")) == it->end()) {
    it->push_back("null");
  }
  return schema;
}

Json ApplySpec(Json schema, const Spec& spec) {
  if (!spec.one_of.empty()) {
    // An enum replaces the string type (the enum says it all); a nullable enum keeps null.
    bool nullable = schema.contains("type") && schema["type"].is_array();
    schema.erase("type");
    schema["enum"] = spec.one_of;
    if (nullable) schema["enum"].push_back(nullptr);
  }
  if (spec.schema.is_object())
    for (const auto& [k, v] : spec.schema.items()) schema[k] = v;
  if (!spec.description.empty()) schema["description"] = std::string(spec.description);
  auto number = [](double d) { return d == static_cast<double>(static_cast<int64_t>(d)) ? Json(static_cast<int64_t>(d)) : Json(d); };
  if (spec.minimum) schema["minimum"] = number(*spec.minimum);
  if (spec.maximum) schema["maximum"] = number(*spec.maximum);
  if (spec.min_length) schema["minLength"] = *spec.min_length;
  if (spec.max_length) schema["maxLength"] = *spec.max_length;
  if (!spec.pattern.empty()) schema["pattern"] = std::string(spec.pattern);
  if (spec.min_items) schema["minItems"] = *spec.min_items;
  if (spec.max_items) schema["maxItems"] = *spec.max_items;
  if (!spec.default_value.is_null()) schema["default"] = spec.default_value;
  return schema;
}

}  // namespace mt::mcp::typed_detail
