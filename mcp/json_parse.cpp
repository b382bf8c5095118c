#include "mcp/json_parse.h"

#include <set>
#include <vector>

namespace mt::mcp {

namespace {

using DomParser = nlohmann::detail::json_sax_dom_parser<Json>;

// Forwards every SAX event to nlohmann's own DOM builder after checking depth and keys,
// so the value is built in the same single pass that enforces the limits.
class LimitedSax {
 public:
  LimitedSax(Json& out, std::size_t max_depth) : dom_(out, false), max_depth_(max_depth) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(Json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(Json::number_float_t v, const Json::string_t& s) { return dom_.number_float(v, s); }
  bool string(Json::string_t& v) { return dom_.string(v); }
  bool binary(Json::binary_t& v) { return dom_.binary(v); }

  bool start_object(std::size_t n) {
    if (!Enter()) return false;
    keys_.emplace_back();
    return dom_.start_object(n);
  }
  bool key(Json::string_t& k) {
    if (!keys_.back().insert(k).second) {
      error_ = "duplicate object key \"" + k.substr(0, 64) + "\" (each key may appear once)";
      return false;
    }
    return dom_.key(k);
  }
  bool end_object() {
    keys_.pop_back();
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    if (!Enter()) return false;
    keys_.emplace_back();   // keeps keys_ aligned with depth; arrays never use it
    return dom_.start_array(n);
  }
  bool end_array() {
    keys_.pop_back();
    --depth_;
    return dom_.end_array();
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) {
    error_ = "not valid JSON (syntax error at byte " + std::to_string(position) + ")";
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  bool Enter() {
    if (++depth_ > max_depth_) {
      error_ = "JSON nested deeper than " + std::to_string(max_depth_) + " levels";
      return false;
    }
    return true;
  }

  DomParser dom_;
  std::size_t max_depth_;
  std::size_t depth_ = 0;
  std::vector<std::set<std::string>> keys_;
  std::string error_;
};

}  // namespace

JsonParseResult ParseUntrustedJson(std::string_view text, const JsonLimits& limits) {
  JsonParseResult r;
  if (text.size() > limits.max_bytes) {
    r.error = "JSON text of " + std::to_string(text.size()) + " bytes is over the limit of " +
              std::to_string(limits.max_bytes) + " bytes";
    return r;
  }
  LimitedSax sax(r.value, limits.max_depth);
  bool ok = Json::sax_parse(text.begin(), text.end(), &sax, nlohmann::detail::input_format_t::json, true, false);
  if (!ok || r.value.is_discarded()) {
    r.error = sax.error().empty() ? "not valid JSON" : sax.error();
    r.value = Json();
  }
  return r;
}

}  // namespace mt::mcp
