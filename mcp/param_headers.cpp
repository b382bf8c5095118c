#include "mcp/param_headers.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string_view>

#include "mcp/base64.h"
#include "mcp/json_rpc.h"

namespace mt::mcp {

namespace {

// RFC 9110 §5.6.2 tchar.
bool IsToken(const std::string& s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    if (std::isalnum(c)) continue;
    if (std::string_view("!#$%&'*+-.^_`|~").find(char(c)) == std::string_view::npos) return false;
  }
  return true;
}

std::string Lower(std::string s) {
  for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void Collect(const Json& schema, std::vector<std::string>& path, std::vector<ParamHeader>& out) {
  auto props = schema.find("properties");
  if (props == schema.end() || !props->is_object()) return;
  for (auto it = props->begin(); it != props->end(); ++it) {
    if (!it.value().is_object()) continue;
    path.push_back(it.key());
    const Json& p = it.value();
    if (auto h = p.find("x-mcp-header"); h != p.end()) {
      std::string type = p.value("type", Json()).is_string() ? p["type"].get<std::string>() : "";
      if (h->is_string() && IsToken(h->get<std::string>()) &&
          (type == "string" || type == "integer" || type == "boolean"))
        out.push_back({path, h->get<std::string>(), type});
    }
    Collect(p, path, out);
    path.pop_back();
  }
}

std::string Dotted(const std::vector<std::string>& path) {
  std::string s = "arguments";
  for (const auto& k : path) s += "." + k;
  return s;
}

const Json* ValueAt(const Json& args, const std::vector<std::string>& path) {
  const Json* v = &args;
  for (const auto& k : path) {
    if (!v->is_object()) return nullptr;
    auto it = v->find(k);
    if (it == v->end()) return nullptr;
    v = &*it;
  }
  return v;
}

bool SameValue(const Json& body, const std::string& header) {
  if (body.is_string()) return body.get<std::string>() == header;
  if (body.is_boolean()) return header == (body.get<bool>() ? "true" : "false");
  if (body.is_number()) {
    // Numerically: "42", "42.0" and 42 agree.
    if (header.empty()) return false;
    char* end = nullptr;
    double h = std::strtod(header.c_str(), &end);
    if (*end != '\0' || !std::isfinite(h)) return false;
    return h == body.get<double>();
  }
  return false;
}

}  // namespace

std::vector<ParamHeader> ParamHeaders(const Json& input_schema) {
  std::vector<ParamHeader> all;
  if (!input_schema.is_object()) return all;
  std::vector<std::string> path;
  Collect(input_schema, path, all);
  // A name used twice (case-insensitively) is ambiguous: neither is enforced.
  std::map<std::string, int> uses;
  for (const auto& h : all) ++uses[Lower(h.name)];
  std::vector<ParamHeader> out;
  for (auto& h : all)
    if (uses[Lower(h.name)] == 1) out.push_back(std::move(h));
  return out;
}

void CheckParamHeaders(const Json& input_schema, const Json& arguments,
                       const std::function<std::optional<std::string>(const std::string&)>& header) {
  for (const auto& ph : ParamHeaders(input_schema)) {
    const std::string hname = "Mcp-Param-" + ph.name;
    const Json* body = ValueAt(arguments, ph.path);
    const bool in_body = body && !body->is_null();
    std::optional<std::string> raw = header(hname);
    if (!raw) {
      if (in_body)
        throw RpcError(kHeaderMismatch, "Header mismatch: " + hname + " header is missing but " + Dotted(ph.path) +
                                            " is in the body");
      continue;
    }
    for (unsigned char c : *raw) {
      if ((c < 0x20 && c != '\t') || c > 0x7E)
        throw RpcError(kHeaderMismatch, "Header mismatch: " + hname + " header contains characters a header value may not carry");
    }
    std::string value = *raw;
    if (value.size() >= 11 && value.rfind("=?base64?", 0) == 0 && value.compare(value.size() - 2, 2, "?=") == 0) {
      auto decoded = Base64DecodeStrict(std::string_view(value).substr(9, value.size() - 11));
      if (!decoded)
        throw RpcError(kHeaderMismatch, "Header mismatch: " + hname + " header is not valid Base64 inside =?base64?…?=");
      value = *decoded;
    }
    if (!in_body)
      throw RpcError(kHeaderMismatch, "Header mismatch: " + hname + " header is present but " + Dotted(ph.path) +
                                          " is not in the body");
    if (!SameValue(*body, value))
      throw RpcError(kHeaderMismatch, "Header mismatch: " + hname + " header does not match " + Dotted(ph.path));
  }
}

}  // namespace mt::mcp
