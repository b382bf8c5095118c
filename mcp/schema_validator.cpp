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

class Validator {
 public:
  explicit Validator(const Json& root) : root_(root) {}

  std::optional<std::string> Check(const Json& s, const Json& v, const std::string& path, int depth = 0) {
    if (depth > 64) return path + ": schema nesting too deep (recursive $ref?)";
    if (s.is_boolean()) {
      if (s.get<bool>()) return std::nullopt;
      return path + ": no value is allowed here";
    }
    if (!s.is_object()) return std::nullopt;

    if (auto r = s.find("$ref"); r != s.end() && r->is_string()) {
      const Json* target = Resolve(r->get<std::string>());
      if (!target) return path + ": schema has an unresolvable $ref " + r->get<std::string>();
      if (auto e = Check(*target, v, path, depth + 1)) return e;
    }
    if (auto t = s.find("type"); t != s.end()) {
      bool ok = false;
      std::string want;
      if (t->is_string()) {
        want = t->get<std::string>();
        ok = HasType(v, want);
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
      if (!ok) return path + ": expected " + want + ", got " + TypeName(v);
    }
    if (auto e = s.find("enum"); e != s.end() && e->is_array()) {
      bool found = false;
      for (const auto& x : *e) found = found || x == v;
      if (!found) return path + ": " + Short(v) + " is not one of " + Short(*e);
    }
    if (auto c = s.find("const"); c != s.end() && *c != v) return path + ": must be " + Short(*c);

    if (v.is_number()) {
      if (auto e = Numeric(s, v, path)) return e;
    }
    if (v.is_string()) {
      const auto& str = v.get_ref<const std::string&>();
      if (auto m = s.find("minLength"); m != s.end() && m->is_number() && CodePoints(str) < m->get<double>())
        return path + ": shorter than " + m->dump() + " characters";
      if (auto m = s.find("maxLength"); m != s.end() && m->is_number() && CodePoints(str) > m->get<double>())
        return path + ": longer than " + m->dump() + " characters";
      if (auto p = s.find("pattern"); p != s.end() && p->is_string()) {
        const RE2* re = Pattern(p->get<std::string>());
        if (re && !RE2::PartialMatch(str, *re)) return path + ": does not match pattern " + p->get<std::string>();
      }
    }
    if (v.is_array()) {
      if (auto e = Array(s, v, path, depth)) return e;
    }
    if (v.is_object()) {
      if (auto e = Object(s, v, path, depth)) return e;
    }
    if (auto e = Combinators(s, v, path, depth)) return e;
    return std::nullopt;
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

  std::optional<std::string> Numeric(const Json& s, const Json& v, const std::string& path) {
    double x = v.get<double>();
    auto num = [&](const char* k) -> std::optional<double> {
      auto it = s.find(k);
      if (it == s.end() || !it->is_number()) return std::nullopt;
      return it->get<double>();
    };
    if (auto m = num("minimum"); m && x < *m) return path + ": must be >= " + s["minimum"].dump();
    if (auto m = num("maximum"); m && x > *m) return path + ": must be <= " + s["maximum"].dump();
    if (auto m = num("exclusiveMinimum"); m && x <= *m) return path + ": must be > " + s["exclusiveMinimum"].dump();
    if (auto m = num("exclusiveMaximum"); m && x >= *m) return path + ": must be < " + s["exclusiveMaximum"].dump();
    if (auto m = num("multipleOf"); m && *m > 0) {
      double q = x / *m;
      if (std::fabs(q - std::round(q)) > 1e-9) return path + ": must be a multiple of " + s["multipleOf"].dump();
    }
    return std::nullopt;
  }

  std::optional<std::string> Array(const Json& s, const Json& v, const std::string& path, int depth) {
    size_t n = v.size();
    if (auto m = s.find("minItems"); m != s.end() && m->is_number() && n < m->get<double>())
      return path + ": needs at least " + m->dump() + " items";
    if (auto m = s.find("maxItems"); m != s.end() && m->is_number() && n > m->get<double>())
      return path + ": allows at most " + m->dump() + " items";
    if (auto u = s.find("uniqueItems"); u != s.end() && u->is_boolean() && u->get<bool>()) {
      for (size_t i = 0; i < n; ++i)
        for (size_t j = i + 1; j < n; ++j)
          if (v[i] == v[j]) return path + ": items must be unique (" + Short(v[i]) + " repeats)";
    }
    size_t first = 0;
    if (auto p = s.find("prefixItems"); p != s.end() && p->is_array()) {
      for (; first < p->size() && first < n; ++first)
        if (auto e = Check((*p)[first], v[first], path + "[" + std::to_string(first) + "]", depth + 1)) return e;
    }
    if (auto it = s.find("items"); it != s.end() && (it->is_object() || it->is_boolean())) {
      for (size_t i = first; i < n; ++i)
        if (auto e = Check(*it, v[i], path + "[" + std::to_string(i) + "]", depth + 1)) return e;
    }
    return std::nullopt;
  }

  std::optional<std::string> Object(const Json& s, const Json& v, const std::string& path, int depth) {
    if (auto r = s.find("required"); r != s.end() && r->is_array()) {
      for (const auto& k : *r)
        if (k.is_string() && !v.contains(k.get<std::string>()))
          return path + "." + k.get<std::string>() + ": required property is missing";
    }
    if (auto m = s.find("minProperties"); m != s.end() && m->is_number() && v.size() < m->get<double>())
      return path + ": needs at least " + m->dump() + " properties";
    if (auto m = s.find("maxProperties"); m != s.end() && m->is_number() && v.size() > m->get<double>())
      return path + ": allows at most " + m->dump() + " properties";
    auto props = s.find("properties");
    auto pattern_props = s.find("patternProperties");
    auto additional = s.find("additionalProperties");
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string child = path + "." + it.key();
      bool matched = false;
      if (props != s.end() && props->is_object()) {
        if (auto p = props->find(it.key()); p != props->end()) {
          matched = true;
          if (auto e = Check(*p, it.value(), child, depth + 1)) return e;
        }
      }
      if (pattern_props != s.end() && pattern_props->is_object()) {
        for (auto pp = pattern_props->begin(); pp != pattern_props->end(); ++pp) {
          const RE2* re = Pattern(pp.key());
          if (re && RE2::PartialMatch(it.key(), *re)) {
            matched = true;
            if (auto e = Check(pp.value(), it.value(), child, depth + 1)) return e;
          }
        }
      }
      if (!matched && additional != s.end()) {
        if (additional->is_boolean() && !additional->get<bool>())
          return child + ": unknown property (allowed: " + Allowed(s) + ")";
        if (additional->is_object())
          if (auto e = Check(*additional, it.value(), child, depth + 1)) return e;
      }
    }
    return std::nullopt;
  }

  static std::string Allowed(const Json& s) {
    std::string names;
    if (auto p = s.find("properties"); p != s.end() && p->is_object())
      for (auto it = p->begin(); it != p->end(); ++it) names += (names.empty() ? "" : ", ") + it.key();
    return names.empty() ? "none" : names;
  }

  std::optional<std::string> Combinators(const Json& s, const Json& v, const std::string& path, int depth) {
    if (auto a = s.find("allOf"); a != s.end() && a->is_array()) {
      for (const auto& sub : *a)
        if (auto e = Check(sub, v, path, depth + 1)) return e;
    }
    if (auto a = s.find("anyOf"); a != s.end() && a->is_array()) {
      std::optional<std::string> first_error;
      bool any = false;
      for (const auto& sub : *a) {
        auto e = Check(sub, v, path, depth + 1);
        if (!e) { any = true; break; }
        if (!first_error) first_error = e;
      }
      if (!any) return path + ": matches none of the allowed alternatives (first: " + first_error.value_or("?") + ")";
    }
    if (auto a = s.find("oneOf"); a != s.end() && a->is_array()) {
      int matches = 0;
      for (const auto& sub : *a)
        if (!Check(sub, v, path, depth + 1)) ++matches;
      if (matches != 1)
        return path + ": must match exactly one alternative, matches " + std::to_string(matches);
    }
    if (auto n = s.find("not"); n != s.end()) {
      if (!Check(*n, v, path, depth + 1)) return path + ": matches a schema it must not match";
    }
    if (auto i = s.find("if"); i != s.end()) {
      bool cond = !Check(*i, v, path, depth + 1);
      auto branch = s.find(cond ? "then" : "else");
      if (branch != s.end())
        if (auto e = Check(*branch, v, path, depth + 1)) return e;
    }
    return std::nullopt;
  }

  const Json& root_;
};

}  // namespace

std::optional<std::string> ValidateSchema(const Json& schema, const Json& value, const std::string& root_name) {
  Validator v(schema);
  return v.Check(schema, value, root_name);
}

}  // namespace mt::mcp
