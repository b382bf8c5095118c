#include "mcp/prompt.h"

namespace mt::mcp {

Json Prompt::ToJson() const {
  Json p = {{"name", name}, {"description", description}};
  if (!title.empty()) p["title"] = title;
  if (!arguments.empty()) {
    Json args = Json::array();
    for (const auto& a : arguments) {
      Json j = {{"name", a.name}, {"required", a.required}};
      if (!a.description.empty()) j["description"] = a.description;
      args.push_back(std::move(j));
    }
    p["arguments"] = std::move(args);
  }
  return p;
}

}  // namespace mt::mcp
