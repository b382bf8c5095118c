#include "mcp/resource.h"

namespace mt::mcp {

Json ResourceContents::ToJson() const {
  Json c = {{"uri", uri}};
  if (!mime_type.empty()) c["mimeType"] = mime_type;
  if (text) c["text"] = *text;
  if (blob_base64) c["blob"] = *blob_base64;
  return c;
}

Json Resource::ToJson() const {
  Json r = {{"uri", uri}, {"name", name}};
  if (!title.empty()) r["title"] = title;
  if (!description.empty()) r["description"] = description;
  if (!mime_type.empty()) r["mimeType"] = mime_type;
  return r;
}

Json ResourceTemplate::ToJson() const {
  Json r = {{"uriTemplate", uri_template}, {"name", name}};
  if (!title.empty()) r["title"] = title;
  if (!description.empty()) r["description"] = description;
  if (!mime_type.empty()) r["mimeType"] = mime_type;
  return r;
}

bool MatchUriTemplate(const std::string& tpl, const std::string& uri, std::map<std::string, std::string>* vars) {
  std::map<std::string, std::string> found;
  size_t t = 0, u = 0;
  while (t < tpl.size()) {
    if (tpl[t] != '{') {
      if (u >= uri.size() || uri[u] != tpl[t]) return false;
      ++t, ++u;
      continue;
    }
    size_t close = tpl.find('}', t);
    if (close == std::string::npos) return false;
    std::string name = tpl.substr(t + 1, close - t - 1);
    t = close + 1;
    // The variable runs to the next literal character of the template (or '/' / end).
    char stop = t < tpl.size() ? tpl[t] : '\0';
    size_t end = u;
    while (end < uri.size() && uri[end] != '/' && (stop == '\0' || uri[end] != stop)) ++end;
    if (end == u) return false;   // empty values do not match
    found[name] = uri.substr(u, end - u);
    u = end;
  }
  if (u != uri.size()) return false;
  if (vars) *vars = std::move(found);
  return true;
}

}  // namespace mt::mcp
