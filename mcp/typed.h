// One description per answer: a tool's input and output are C++ structs, and both the JSON
// schema (tools/list) and the JSON encoding / decoding come from one field list per struct.
//
// A struct describes itself with a static `Fields` template that names each member once:
//
//   struct ReadLogLine {
//     int64_t line = 0;
//     std::string text;
//     Nullable<int64_t> rank;
//     template <class F> static void Fields(F& f) {
//       f("line", &ReadLogLine::line, {.description = "1-based line number", .minimum = 1});
//       f("text", &ReadLogLine::text);
//       f("rank", &ReadLogLine::rank);
//     }
//   };
//
// Member types map to schemas: bool → boolean, integers → integer, floating → number,
// std::string → string, Json → any value (or `Spec::schema`), std::vector<T> → array,
// std::map<std::string, T> → object of T, a described struct → a closed object.
// Presence: a plain member is required (always encoded); `Nullable<T>` is required and
// encodes as null when empty (type [T, "null"]); `std::optional<T>` may be absent (not
// required, omitted when empty). An input member with a `default_value` is not required
// either: the C++ initializer is the default, the schema shows it.
//
// MakeTypedTool turns a function `Out(const In&, CallContext&)` into an mcp::Tool whose
// schemas come from In and Out; the dispatcher validates against them, so decoding never
// sees a value of the wrong type.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "mcp/json.h"
#include "mcp/json_rpc.h"
#include "mcp/tool.h"

namespace mt::mcp {

// Keywords for one field, in the order designated initializers must follow.
struct Spec {
  std::string_view description{};
  std::optional<double> minimum{};
  std::optional<double> maximum{};
  std::optional<int64_t> min_length{};
  std::optional<int64_t> max_length{};
  std::string_view pattern{};
  std::vector<std::string> one_of{};   // a string enum
  Json default_value{};                // shown in the schema; the C++ initializer is the value
  Json schema{};                       // extra keywords merged into the generated schema
                                       // (for a Json member: its whole schema)
  std::optional<int64_t> min_items{};
  std::optional<int64_t> max_items{};
};

// Always present in the encoding; null when empty.
template <class T>
struct Nullable : std::optional<T> {
  using std::optional<T>::optional;
  Nullable() = default;
  Nullable(const std::optional<T>& o) : std::optional<T>(o) {}  // NOLINT: implicit on purpose
  template <class U>
    requires(!std::is_same_v<std::remove_cvref_t<U>, Nullable>)
  Nullable& operator=(U&& value) {
    std::optional<T>::operator=(std::forward<U>(value));
    return *this;
  }
};

namespace typed_detail {

struct FieldProbe {
  template <class C, class M>
  void operator()(std::string_view, M C::*, const Spec& = {}) {}
};

template <class T>
concept Described = requires(FieldProbe& p) { T::Fields(p); };

template <class T> struct IsVector : std::false_type {};
template <class T> struct IsVector<std::vector<T>> : std::true_type { using Item = T; };
template <class T> struct IsMap : std::false_type {};
template <class T> struct IsMap<std::map<std::string, T>> : std::true_type { using Item = T; };
template <class T> struct IsOptional : std::false_type {};
template <class T> struct IsOptional<std::optional<T>> : std::true_type { using Item = T; };
template <class T> struct IsNullable : std::false_type {};
template <class T> struct IsNullable<Nullable<T>> : std::true_type { using Item = T; };

// Adds null to a schema's type (or enum); a schema that allows anything stays as it is.
Json AllowNull(Json schema);
// Merges a field's keywords into its type's schema.
Json ApplySpec(Json schema, const Spec& spec);

}  // namespace typed_detail

template <class T> Json SchemaOf();
template <class T> Json Encode(const T& value);
template <class T> void Decode(const Json& json, T& value);

namespace typed_detail {

template <class T>
Json TypeSchema() {
  if constexpr (std::is_same_v<T, bool>) {
    return Json{{"type", "boolean"}};
  } else if constexpr (std::is_integral_v<T>) {
    return Json{{"type", "integer"}};
  } else if constexpr (std::is_floating_point_v<T>) {
    return Json{{"type", "number"}};
  } else if constexpr (std::is_same_v<T, std::string>) {
    return Json{{"type", "string"}};
  } else if constexpr (std::is_same_v<T, Json>) {
    return Json::object();
  } else if constexpr (IsNullable<T>::value) {
    return AllowNull(TypeSchema<typename IsNullable<T>::Item>());
  } else if constexpr (IsOptional<T>::value) {
    return TypeSchema<typename IsOptional<T>::Item>();
  } else if constexpr (IsVector<T>::value) {
    return Json{{"type", "array"}, {"items", TypeSchema<typename IsVector<T>::Item>()}};
  } else if constexpr (IsMap<T>::value) {
    return Json{{"type", "object"}, {"additionalProperties", TypeSchema<typename IsMap<T>::Item>()}};
  } else {
    static_assert(Described<T>, "a member type the schema generator does not know: describe it with Fields");
    Json props = Json::object();
    Json required = Json::array();
    auto field = [&]<class C, class M>(std::string_view name, M C::*, const Spec& spec = {}) {
      props[std::string(name)] = ApplySpec(TypeSchema<M>(), spec);
      if (!IsOptional<M>::value && spec.default_value.is_null()) required.push_back(std::string(name));
    };
    T::Fields(field);
    return Json{{"type", "object"}, {"properties", props}, {"required", required}, {"additionalProperties", false}};
  }
}

template <class T>
Json EncodeValue(const T& v) {
  if constexpr (IsNullable<T>::value || IsOptional<T>::value) {
    return v ? EncodeValue(*v) : Json(nullptr);
  } else if constexpr (IsVector<T>::value) {
    Json a = Json::array();
    for (const auto& item : v) a.push_back(EncodeValue(item));
    return a;
  } else if constexpr (IsMap<T>::value) {
    Json o = Json::object();
    for (const auto& [k, item] : v) o[k] = EncodeValue(item);
    return o;
  } else if constexpr (Described<T>) {
    Json o = Json::object();
    auto field = [&]<class C, class M>(std::string_view name, M C::*member, const Spec& = {}) {
      const M& m = v.*member;
      if constexpr (IsOptional<M>::value) {
        if (!m) return;
      }
      o[std::string(name)] = EncodeValue(m);
    };
    T::Fields(field);
    return o;
  } else {
    return Json(v);
  }
}

template <class T>
void DecodeValue(const Json& j, T& v) {
  if constexpr (IsNullable<T>::value || IsOptional<T>::value) {
    if (j.is_null()) {
      v.reset();
    } else {
      typename std::remove_cvref_t<decltype(*v)> item{};
      DecodeValue(j, item);
      v.emplace(std::move(item));
    }
  } else if constexpr (IsVector<T>::value) {
    v.clear();
    for (const auto& e : j) DecodeValue(e, v.emplace_back());
  } else if constexpr (IsMap<T>::value) {
    v.clear();
    for (const auto& [k, e] : j.items()) DecodeValue(e, v[k]);
  } else if constexpr (Described<T>) {
    if (!j.is_object()) throw std::invalid_argument("expected an object");
    auto field = [&]<class C, class M>(std::string_view name, M C::*member, const Spec& = {}) {
      auto it = j.find(std::string(name));
      if (it != j.end()) DecodeValue(*it, v.*member);
    };
    T::Fields(field);
  } else {
    v = j.get<T>();
  }
}

}  // namespace typed_detail

// The JSON schema of a described struct (or of any supported member type).
template <class T>
Json SchemaOf() {
  return typed_detail::TypeSchema<T>();
}

template <class T>
Json Encode(const T& value) {
  return typed_detail::EncodeValue(value);
}

// Fills `value` from JSON that already conforms to SchemaOf<T>() (the dispatcher validated
// it); members absent from the JSON keep their initializers.
template <class T>
void Decode(const Json& json, T& value) {
  typed_detail::DecodeValue(json, value);
}

template <class T>
T Decode(const Json& json) {
  T value{};
  Decode(json, value);
  return value;
}

// Decodes JSON that code of ours built (not a client's input) and insists that it is exactly
// the type's encoding: a member the type does not declare, or one of another shape, is a
// bug that would otherwise be dropped silently. Throws std::logic_error naming `what`.
template <class T>
T DecodeExact(const Json& json, std::string_view what) {
  T value = Decode<T>(json);
  if (Encode(value) != json)
    throw std::logic_error(std::string(what) + " does not match its declared type: " + json.dump().substr(0, 200));
  return value;
}

// The parts of a tool that are not its types.
struct ToolInfo {
  std::string name;
  std::string title;
  std::string description;
  ToolAnnotations annotations;
  bool quick = false;
  TaskSupport task_support = TaskSupport::kNone;
  bool task_on_demand = false;
};

// An answer with the result's `_meta` beside it: what the client may want to know about how
// the answer was obtained (e.g. from a cache) but that is not part of the answer itself.
template <class Out>
struct WithMeta {
  Out answer;
  Json meta;
};

namespace typed_detail {

template <class T> struct IsWithMeta : std::false_type {};
template <class T> struct IsWithMeta<WithMeta<T>> : std::true_type {};

// The parts of a typed tool that are not its handler.
template <class In, class Out>
Tool ToolShell(ToolInfo info) {
  Tool t;
  t.name = std::move(info.name);
  t.title = std::move(info.title);
  t.description = std::move(info.description);
  t.input_schema = SchemaOf<In>();
  t.output_schema = SchemaOf<Out>();
  t.annotations = info.annotations;
  t.quick = info.quick;
  t.task_support = info.task_support;
  t.task_on_demand = info.task_on_demand;
  return t;
}

// Runs `run`, encodes its answer and lets `respond` (which may trim the encoding) write the
// text block; a std::exception becomes the tool error "<name>: <what>".
// `Ran` is Out or WithMeta<Out>.
template <class In, class Ran, class Respond>
ToolHandler AnswerHandler(std::string name, std::function<Ran(const In&, CallContext&)> run, Respond respond) {
  return [name = std::move(name), run = std::move(run), respond = std::move(respond)](const Json& args,
                                                                                       CallContext& ctx) -> ToolResult {
    try {
      const In in = Decode<In>(args);
      Ran ran = run(in, ctx);
      if constexpr (IsWithMeta<Ran>::value) {
        Json encoded = Encode(ran.answer);
        std::string text = respond(in, ran.answer, encoded);
        ToolResult r = ToolResult::Structured(std::move(encoded), std::move(text));
        r.meta = std::move(ran.meta);
        return r;
      } else {
        Json encoded = Encode(ran);
        std::string text = respond(in, ran, encoded);
        return ToolResult::Structured(std::move(encoded), std::move(text));
      }
    } catch (const RpcError&) {
      throw;
    } catch (const std::exception& e) {
      return ToolResult::Error(name + ": " + e.what());
    }
  };
}

}  // namespace typed_detail

// A tool from a function of typed input to typed output. `summary` writes the text block
// clients without structured output show. A std::exception from `run` becomes the tool
// error "<name>: <what>" the model can act on (protocol errors and input_required
// signals pass through to the dispatcher).
template <class In, class Out>
Tool MakeTypedTool(ToolInfo info, std::function<Out(const In&, CallContext&)> run,
                   std::function<std::string(const Out&)> summary) {
  Tool t = typed_detail::ToolShell<In, Out>(std::move(info));
  t.handler = typed_detail::AnswerHandler<In, Out>(
      t.name, std::move(run), [summary = std::move(summary)](const In&, const Out& out, Json&) { return summary(out); });
  return t;
}

// The same for an answer that comes with the result's `_meta`.
template <class In, class Out>
Tool MakeTypedTool(ToolInfo info, std::function<WithMeta<Out>(const In&, CallContext&)> run,
                   std::function<std::string(const Out&)> summary) {
  Tool t = typed_detail::ToolShell<In, Out>(std::move(info));
  t.handler = typed_detail::AnswerHandler<In, WithMeta<Out>>(
      t.name, std::move(run), [summary = std::move(summary)](const In&, const Out& out, Json&) { return summary(out); });
  return t;
}

// The same for an answer with `_meta` that is bounded after encoding.
template <class In, class Out>
Tool MakeTypedTool(ToolInfo info, std::function<WithMeta<Out>(const In&, CallContext&)> run,
                   std::function<std::string(const In&, Json& encoded)> finish) {
  Tool t = typed_detail::ToolShell<In, Out>(std::move(info));
  t.handler = typed_detail::AnswerHandler<In, WithMeta<Out>>(
      t.name, std::move(run), [finish = std::move(finish)](const In& in, const Out&, Json& encoded) { return finish(in, encoded); });
  return t;
}

// The same for an answer that is bounded after encoding (an answer budget measures the JSON
// an agent reads): `finish` may trim the encoding (within the schema: capped arrays,
// `truncated`, `omitted`) and returns the text block.
template <class In, class Out>
Tool MakeTypedTool(ToolInfo info, std::function<Out(const In&, CallContext&)> run,
                   std::function<std::string(const In&, Json& encoded)> finish) {
  Tool t = typed_detail::ToolShell<In, Out>(std::move(info));
  t.handler = typed_detail::AnswerHandler<In, Out>(
      t.name, std::move(run), [finish = std::move(finish)](const In& in, const Out&, Json& encoded) { return finish(in, encoded); });
  return t;
}

// For tools whose handler builds the whole result itself (approval-gated tools answer with a
// plan record, an error or an input_required round): schemas from In and Out, arguments
// decoded into In, the handler's ToolResult returned as it is.
template <class In, class Out>
Tool MakeTypedTool(ToolInfo info, std::function<ToolResult(const In&, CallContext&)> run) {
  Tool t = typed_detail::ToolShell<In, Out>(std::move(info));
  t.handler = [run = std::move(run)](const Json& args, CallContext& ctx) -> ToolResult { return run(Decode<In>(args), ctx); };
  return t;
}

}  // namespace mt::mcp
