#include "mcp/schema_validator.h"

#include <re2/re2.h>

#include <cmath>
#include <map>
#include <memory>
#include <mutex>

namespace mt::mcp {

namespace {

const char* TypeName(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "integer";
    case Json::value_t::number_float: return "number";
    case Json::value_t::string: return "string";
    case Json::value_t::array: return "array";
    case Json::value_t::object: return "object";
    default: return "unknown";
  }
}

bool IsInteger(const Json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return true;
  if (v.is_number_float()) {
    double d = v.get<double>();
    return std::isfinite(d) && std::floor(d) == d;
  }
  return false;
}

bool HasType(const Json& v, const std::string& t) {
  if (t == "integer") return IsInteger(v);
  if (t == "number") return v.is_number();
  if (t == "string") return v.is_string();
  if (t == "boolean") return v.is_boolean();
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "null") return v.is_null();
  return false;
}

// Compiled patterns are cached: tool schemas are validated on every call.
const RE2* Pattern(const std::string& p) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<RE2>> cache;
  std::lock_guard lock(mu);
  auto it = cache.find(p);
  if (it == cache.end()) {
    RE2::Options o;
    o.set_log_errors(false);
    it = cache.emplace(p, std::make_unique<RE2>(p, o)).first;
  }
  return it->second->ok() ? it->second.get() : nullptr;
}

// UTF-8 code points, as JSON Schema counts string length.
size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string Short(const Json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

// The keywords this validator enforces. A schema node is scanned once into a table of
// pointers, so a node costs one pass over the keys it has, not a lookup per keyword.
enum Kw {
  kRef, kType, kEnum, kConst, kMinimum, kMaximum, kExclusiveMinimum, kExclusiveMaximum, kMultipleOf,
  kMinLength, kMaxLength, kPattern, kMinItems, kMaxItems, kUniqueItems, kPrefixItems, kItems, kRequired,
  kMinProperties, kMaxProperties, kProperties, kPatternProperties, kAdditionalProperties, kAllOf, kAnyOf,
  kOneOf, kNot, kIf, kThen, kElse, kKwCount
};

struct Keywords {
  const Json* k[kKwCount] = {};
  explicit Keywords(const Json& s) {
    static const std::map<std::string, Kw, std::less<>> names = {
        {"$ref", kRef}, {"type", kType}, {"enum", kEnum}, {"const", kConst}, {"minimum", kMinimum},
        {"maximum", kMaximum}, {"exclusiveMinimum", kExclusiveMinimum}, {"exclusiveMaximum", kExclusiveMaximum},
        {"multipleOf", kMultipleOf}, {"minLength", kMinLength}, {"maxLength", kMaxLength}, {"pattern", kPattern},
        {"minItems", kMinItems}, {"maxItems", kMaxItems}, {"uniqueItems", kUniqueItems}, {"prefixItems", kPrefixItems},
        {"items", kItems}, {"required", kRequired}, {"minProperties", kMinProperties}, {"maxProperties", kMaxProperties},
        {"properties", kProperties}, {"patternProperties", kPatternProperties},
        {"additionalProperties", kAdditionalProperties}, {"allOf", kAllOf}, {"anyOf", kAnyOf}, {"oneOf", kOneOf},
        {"not", kNot}, {"if", kIf}, {"then", kThen}, {"else", kElse}};
    for (auto it = s.begin(); it != s.end(); ++it) {
      auto n = names.find(it.key());
      if (n != names.end()) k[n->second] = &it.value();
    }
  }
  const Json* operator[](Kw w) const { return k[w]; }
};

// Where in the value we are; rendered to "arguments.nodes[2]" only when reporting.
struct Path {
  const Path* parent = nullptr;
  const std::string* key = nullptr;   // property name, or
  size_t index = 0;                   // array index when key is null
  const std::string* root = nullptr;  // set on the root only

  std::string Render() const {
    if (root) return *root;
    std::string p = parent->Render();
    return key ? p + "." + *key : p + "[" + std::to_string(index) + "]";
  }
};

std::optional<double> Number(const Json* j) {
  if (!j || !j->is_number()) return std::nullopt;
  return j->get<double>();
}

class Validator {
 public:
  explicit Validator(const Json& root) : root_(root) {}

  std::optional<std::string> Check(const Json& s, const Json& v, const Path& path, int depth = 0) {
    if (depth > 64) return path.Render() + ": schema nesting too deep (recursive $ref?)";
    if (s.is_boolean()) {
      if (s.get<bool>()) return std::nullopt;
      return path.Render() + ": no value is allowed here";
    }
    if (!s.is_object()) return std::nullopt;
    Keywords k(s);

    if (const Json* r = k[kRef]; r && r->is_string()) {
      const Json* target = Resolve(r->get<std::string>());
      if (!target) return path.Render() + ": schema has an unresolvable $ref " + r->get<std::string>();
      if (auto e = Check(*target, v, path, depth + 1)) return e;
    }
    if (const Json* t = k[kType]) {
      bool ok = false;
      std::string want;
      if (t->is_string()) {
        ok = HasType(v, t->get_ref<const std::string&>());
        if (!ok) want = t->get<std::string>();
      } else if (t->is_array()) {
        for (const auto& x : *t) {
          if (!x.is_string()) continue;
          if (!want.empty()) want += " or ";
          want += x.get<std::string>();
          ok = ok || HasType(v, x.get<std::string>());
        }
      } else {
        ok = true;
      }
      if (!ok) return path.Render() + ": expected " + want + ", got " + TypeName(v);
    }
    if (const Json* e = k[kEnum]; e && e->is_array()) {
      bool found = false;
      for (const auto& x : *e) found = found || x == v;
      if (!found) return path.Render() + ": " + Short(v) + " is not one of " + Short(*e);
    }
    if (const Json* c = k[kConst]; c && *c != v) return path.Render() + ": must be " + Short(*c);

    if (v.is_number()) {
      if (auto e = NumericChecks(k, v, path)) return e;
    }
    if (v.is_string()) {
      const auto& str = v.get_ref<const std::string&>();
      if (auto m = Number(k[kMinLength]); m && CodePoints(str) < *m)
        return path.Render() + ": shorter than " + k[kMinLength]->dump() + " characters";
      if (auto m = Number(k[kMaxLength]); m && CodePoints(str) > *m)
        return path.Render() + ": longer than " + k[kMaxLength]->dump() + " characters";
      if (const Json* p = k[kPattern]; p && p->is_string()) {
        const RE2* re = Pattern(p->get<std::string>());
        if (re && !RE2::PartialMatch(str, *re)) return path.Render() + ": does not match pattern " + p->get<std::string>();
      }
    }
    if (v.is_array()) {
      if (auto e = Array(k, v, path, depth)) return e;
    }
    if (v.is_object()) {
      if (auto e = Object(k, v, path, depth)) return e;
    }
    return Combinators(k, v, path, depth);
  }

 private:
  const Json* Resolve(const std::string& ref) {
    if (ref == "#") return &root_;
    if (ref.rfind("#/", 0) != 0) return nullptr;
    try {
      const Json& target = root_.at(Json::json_pointer(ref.substr(1)));
      return &target;
    } catch (const std::exception&) {
      return nullptr;
    }
  }

  std::optional<std::string> NumericChecks(const Keywords& k, const Json& v, const Path& path) {
    double x = v.get<double>();
    if (auto m = Number(k[kMinimum]); m && x < *m) return path.Render() + ": must be >= " + k[kMinimum]->dump();
    if (auto m = Number(k[kMaximum]); m && x > *m) return path.Render() + ": must be <= " + k[kMaximum]->dump();
    if (auto m = Number(k[kExclusiveMinimum]); m && x <= *m)
      return path.Render() + ": must be > " + k[kExclusiveMinimum]->dump();
    if (auto m = Number(k[kExclusiveMaximum]); m && x >= *m)
      return path.Render() + ": must be < " + k[kExclusiveMaximum]->dump();
    if (auto m = Number(k[kMultipleOf]); m && *m > 0) {
      double q = x / *m;
      if (std::fabs(q - std::round(q)) > 1e-9) return path.Render() + ": must be a multiple of " + k[kMultipleOf]->dump();
    }
    return std::nullopt;
  }

  std::optional<std::string> Array(const Keywords& k, const Json& v, const Path& path, int depth) {
    size_t n = v.size();
    if (auto m = Number(k[kMinItems]); m && n < *m) return path.Render() + ": needs at least " + k[kMinItems]->dump() + " items";
    if (auto m = Number(k[kMaxItems]); m && n > *m) return path.Render() + ": allows at most " + k[kMaxItems]->dump() + " items";
    if (const Json* u = k[kUniqueItems]; u && u->is_boolean() && u->get<bool>()) {
      for (size_t i = 0; i < n; ++i)
        for (size_t j = i + 1; j < n; ++j)
          if (v[i] == v[j]) return path.Render() + ": items must be unique (" + Short(v[i]) + " repeats)";
    }
    size_t first = 0;
    if (const Json* p = k[kPrefixItems]; p && p->is_array()) {
      for (; first < p->size() && first < n; ++first) {
        Path child{&path, nullptr, first, nullptr};
        if (auto e = Check((*p)[first], v[first], child, depth + 1)) return e;
      }
    }
    if (const Json* it = k[kItems]; it && (it->is_object() || it->is_boolean())) {
      for (size_t i = first; i < n; ++i) {
        Path child{&path, nullptr, i, nullptr};
        if (auto e = Check(*it, v[i], child, depth + 1)) return e;
      }
    }
    return std::nullopt;
  }

  std::optional<std::string> Object(const Keywords& k, const Json& v, const Path& path, int depth) {
    if (const Json* r = k[kRequired]; r && r->is_array()) {
      for (const auto& key : *r)
        if (key.is_string() && !v.contains(key.get<std::string>()))
          return path.Render() + "." + key.get<std::string>() + ": required property is missing";
    }
    if (auto m = Number(k[kMinProperties]); m && v.size() < *m)
      return path.Render() + ": needs at least " + k[kMinProperties]->dump() + " properties";
    if (auto m = Number(k[kMaxProperties]); m && v.size() > *m)
      return path.Render() + ": allows at most " + k[kMaxProperties]->dump() + " properties";
    const Json* props = k[kProperties];
    const Json* pattern_props = k[kPatternProperties];
    const Json* additional = k[kAdditionalProperties];
    if (!props && !pattern_props && !additional) return std::nullopt;
    for (auto it = v.begin(); it != v.end(); ++it) {
      Path child{&path, &it.key(), 0, nullptr};
      bool matched = false;
      if (props && props->is_object()) {
        if (auto p = props->find(it.key()); p != props->end()) {
          matched = true;
          if (auto e = Check(*p, it.value(), child, depth + 1)) return e;
        }
      }
      if (pattern_props && pattern_props->is_object()) {
        for (auto pp = pattern_props->begin(); pp != pattern_props->end(); ++pp) {
          const RE2* re = Pattern(pp.key());
          if (re && RE2::PartialMatch(it.key(), *re)) {
            matched = true;
            if (auto e = Check(pp.value(), it.value(), child, depth + 1)) return e;
          }
        }
      }
      if (!matched && additional) {
        if (additional->is_boolean() && !additional->get<bool>())
          return child.Render() + ": unknown property (allowed: " + Allowed(props) + ")";
        if (additional->is_object())
          if (auto e = Check(*additional, it.value(), child, depth + 1)) return e;
      }
    }
    return std::nullopt;
  }

  static std::string Allowed(const Json* props) {
    std::string names;
    if (props && props->is_object())
      for (auto it = props->begin(); it != props->end(); ++it) names += (names.empty() ? "" : ", ") + it.key();
    return names.empty() ? "none" : names;
  }

  std::optional<std::string> Combinators(const Keywords& k, const Json& v, const Path& path, int depth) {
    if (const Json* a = k[kAllOf]; a && a->is_array()) {
      for (const auto& sub : *a)
        if (auto e = Check(sub, v, path, depth + 1)) return e;
    }
    if (const Json* a = k[kAnyOf]; a && a->is_array()) {
      std::optional<std::string> first_error;
      bool any = false;
      for (const auto& sub : *a) {
        auto e = Check(sub, v, path, depth + 1);
        if (!e) {
          any = true;
          break;
        }
        if (!first_error) first_error = e;
      }
      if (!any)
        return path.Render() + ": matches none of the allowed alternatives (first: " + first_error.value_or("?") + ")";
    }
    if (const Json* a = k[kOneOf]; a && a->is_array()) {
      int matches = 0;
      for (const auto& sub : *a)
        if (!Check(sub, v, path, depth + 1)) ++matches;
      if (matches != 1) return path.Render() + ": must match exactly one alternative, matches " + std::to_string(matches);
    }
    if (const Json* n = k[kNot]) {
      if (!Check(*n, v, path, depth + 1)) return path.Render() + ": matches a schema it must not match";
    }
    if (const Json* i = k[kIf]) {
      bool cond = !Check(*i, v, path, depth + 1);
      if (const Json* branch = k[cond ? kThen : kElse])
        if (auto e = Check(*branch, v, path, depth + 1)) return e;
    }
    return std::nullopt;
  }

  const Json& root_;
};

}  // namespace

std::optional<std::string> ValidateSchema(const Json& schema, const Json& value, const std::string& root_name) {
  Validator v(schema);
  Path root{nullptr, nullptr, 0, &root_name};
  return v.Check(schema, value, root);
}

}  // namespace mt::mcp
