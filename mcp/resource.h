// Resources (fixed URIs) and resource templates (RFC 6570 level-1 `{var}` URIs).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "mcp/json.h"

namespace mt::mcp {

class CallContext;

// One entry of a resources/read result: text or base64 blob.
struct ResourceContents {
  std::string uri;
  std::string mime_type;
  std::optional<std::string> text;
  std::optional<std::string> blob_base64;
  Json ToJson() const;
};

using ResourceReader = std::function<std::vector<ResourceContents>(const std::string& uri, CallContext& ctx)>;
using TemplateReader = std::function<std::vector<ResourceContents>(
    const std::string& uri, const std::map<std::string, std::string>& vars, CallContext& ctx)>;

struct Resource {
  std::string uri;
  std::string name;
  std::string title;
  std::string description;
  std::string mime_type;
  bool subscribable = false;
  ResourceReader read;
  Json ToJson() const;
};

struct ResourceTemplate {
  std::string uri_template;
  std::string name;
  std::string title;
  std::string description;
  std::string mime_type;
  TemplateReader read;
  Json ToJson() const;
};

// Matches `uri` against a level-1 template (`test://template/{id}/data`); variables never
// span '/'. Returns false when it does not match.
bool MatchUriTemplate(const std::string& uri_template, const std::string& uri,
                      std::map<std::string, std::string>* vars);

}  // namespace mt::mcp
