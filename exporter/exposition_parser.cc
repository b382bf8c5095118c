#include "exporter/exposition_parser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

namespace mt::exporter {

namespace {

bool NameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool NameChar(char c) { return NameStart(c) || (c >= '0' && c <= '9'); }

void SkipBlanks(std::string_view& s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
}

std::string_view TakeName(std::string_view& s, bool allow_colon) {
  size_t i = 0;
  while (i < s.size() && (NameChar(s[i]) || (allow_colon && s[i] == ':'))) ++i;
  std::string_view n = s.substr(0, i);
  s.remove_prefix(i);
  return n;
}

// Go's strconv.ParseFloat accepts these spellings, so Prometheus does too.
bool ParseValue(std::string_view s, double* out) {
  if (s.empty()) return false;
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "nan") {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (lower == "+inf" || lower == "inf" || lower == "+infinity" || lower == "infinity") {
    *out = std::numeric_limits<double>::infinity();
    return true;
  }
  if (lower == "-inf" || lower == "-infinity") {
    *out = -std::numeric_limits<double>::infinity();
    return true;
  }
  std::string_view body = s;
  if (body.front() == '+') body.remove_prefix(1);
  double v = 0;
  auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), v, std::chars_format::general);
  if (ec != std::errc() || p != body.data() + body.size()) return false;
  if (std::isnan(v) || std::isinf(v)) return false;  // only the explicit spellings above
  *out = v;
  return true;
}

bool ParseLabels(std::string_view& s, std::vector<prometheus::ClientMetric::Label>* labels,
                 std::string* error) {
  // s starts after '{'
  std::set<std::string, std::less<>> seen;
  for (;;) {
    SkipBlanks(s);
    if (s.empty()) {
      *error = "unterminated label set";
      return false;
    }
    if (s.front() == '}') {
      s.remove_prefix(1);
      return true;
    }
    std::string_view lname = TakeName(s, false);
    if (lname.empty() || !NameStart(lname.front())) {
      *error = "invalid label name";
      return false;
    }
    if (lname.size() >= 2 && lname[0] == '_' && lname[1] == '_') {
      *error = "reserved label name '" + std::string(lname) + "'";
      return false;
    }
    if (!seen.insert(std::string(lname)).second) {
      *error = "duplicate label '" + std::string(lname) + "'";
      return false;
    }
    SkipBlanks(s);
    if (s.empty() || s.front() != '=') {
      *error = "expected '=' after label name";
      return false;
    }
    s.remove_prefix(1);
    SkipBlanks(s);
    if (s.empty() || s.front() != '"') {
      *error = "expected '\"' to open label value";
      return false;
    }
    s.remove_prefix(1);
    std::string value;
    bool closed = false;
    while (!s.empty()) {
      char c = s.front();
      s.remove_prefix(1);
      if (c == '"') {
        closed = true;
        break;
      }
      if (c == '\\') {
        if (s.empty()) break;
        char e = s.front();
        s.remove_prefix(1);
        if (e == 'n') value += '\n';
        else if (e == '\\') value += '\\';
        else if (e == '"') value += '"';
        else {
          *error = "invalid escape in label value";
          return false;
        }
        continue;
      }
      value += c;
    }
    if (!closed) {
      *error = "unterminated label value";
      return false;
    }
    labels->push_back({std::string(lname), std::move(value)});
    SkipBlanks(s);
    if (!s.empty() && s.front() == ',') {
      s.remove_prefix(1);
      continue;
    }
    if (!s.empty() && s.front() == '}') continue;
    *error = "expected ',' or '}' in label set";
    return false;
  }
}

bool IsUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
    }
    i += n;
  }
  return true;
}

}  // namespace

bool IsValidMetricName(std::string_view name) {
  if (name.empty() || !(NameStart(name.front()) || name.front() == ':')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return NameChar(c) || c == ':'; });
}

bool IsValidLabelName(std::string_view name) {
  if (name.empty() || !NameStart(name.front())) return false;
  return std::all_of(name.begin(), name.end(), NameChar);
}

bool ParseExpositionLine(std::string_view line, ExpositionLine* out, std::string* error) {
  *out = ExpositionLine{};
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!IsUtf8(line)) {
    *error = "not valid UTF-8";
    return false;
  }
  if (line.find('\0') != std::string_view::npos) {
    *error = "NUL byte";
    return false;
  }
  std::string_view s = line;
  SkipBlanks(s);
  if (s.empty()) {
    out->kind = LineKind::kBlank;
    return true;
  }
  if (s.front() == '#') {
    s.remove_prefix(1);
    SkipBlanks(s);
    bool help = s.substr(0, 4) == "HELP" && (s.size() == 4 || s[4] == ' ' || s[4] == '\t');
    bool type = s.substr(0, 4) == "TYPE" && (s.size() == 4 || s[4] == ' ' || s[4] == '\t');
    if (!help && !type) {
      out->kind = LineKind::kComment;
      return true;
    }
    s.remove_prefix(4);
    SkipBlanks(s);
    std::string_view name = TakeName(s, true);
    if (!IsValidMetricName(name)) {
      *error = std::string(help ? "HELP" : "TYPE") + " line without a valid metric name";
      return false;
    }
    out->name = std::string(name);
    if (!s.empty() && s.front() != ' ' && s.front() != '\t') {
      *error = "invalid character in metric name";
      return false;
    }
    SkipBlanks(s);
    if (help) {
      out->kind = LineKind::kHelp;
      for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == 'n' || s[i + 1] == '\\')) {
          out->text += s[i + 1] == 'n' ? '\n' : '\\';
          ++i;
        } else {
          out->text += s[i];
        }
      }
      return true;
    }
    out->kind = LineKind::kType;
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    if (s != "counter" && s != "gauge" && s != "untyped" && s != "summary" && s != "histogram") {
      *error = "unknown metric type '" + std::string(s) + "'";
      return false;
    }
    out->text = std::string(s);
    return true;
  }

  out->kind = LineKind::kSample;
  ExpositionSample& smp = out->sample;
  std::string_view name = TakeName(s, true);
  if (!IsValidMetricName(name)) {
    *error = "invalid metric name";
    return false;
  }
  smp.name = std::string(name);
  out->name = smp.name;
  SkipBlanks(s);
  if (!s.empty() && s.front() == '{') {
    s.remove_prefix(1);
    if (!ParseLabels(s, &smp.labels, error)) return false;
    SkipBlanks(s);
  }
  // value [timestamp]
  size_t end = 0;
  while (end < s.size() && s[end] != ' ' && s[end] != '\t') ++end;
  std::string_view value = s.substr(0, end);
  s.remove_prefix(end);
  if (value.empty()) {
    *error = "missing sample value";
    return false;
  }
  if (!ParseValue(value, &smp.value)) {
    *error = "invalid sample value '" + std::string(value.substr(0, 40)) + "'";
    return false;
  }
  SkipBlanks(s);
  if (!s.empty()) {
    end = 0;
    while (end < s.size() && s[end] != ' ' && s[end] != '\t') ++end;
    std::string_view ts = s.substr(0, end);
    s.remove_prefix(end);
    int64_t t = 0;
    auto [p, ec] = std::from_chars(ts.data(), ts.data() + ts.size(), t);
    if (ec != std::errc() || p != ts.data() + ts.size()) {
      *error = "invalid timestamp '" + std::string(ts.substr(0, 40)) + "'";
      return false;
    }
    if (t == 0) {
      // prometheus-cpp treats timestamp 0 as "no timestamp"; an epoch-0 sample is
      // certainly a bug in the plugin.
      *error = "timestamp 0";
      return false;
    }
    smp.timestamp_ms = t;
    smp.has_timestamp = true;
    SkipBlanks(s);
    if (!s.empty()) {
      *error = "trailing characters after timestamp";
      return false;
    }
  }
  return true;
}

ParsedExposition ParseExposition(std::string_view text, size_t max_series) {
  ParsedExposition result;
  size_t kept_series = 0;
  auto error = [&result](size_t line, std::string reason) {
    ++result.error_count;
    if (result.errors.size() < kMaxErrorDetails) result.errors.push_back({line, std::move(reason)});
  };
  struct FamilyState {
    size_t index = 0;
    bool typed = false;
    bool has_samples = false;
    bool rejected = false;  // summary/histogram: samples are dropped
    std::set<std::vector<prometheus::ClientMetric::Label>> series;
  };
  std::unordered_map<std::string, FamilyState> families;
  // h_bucket / h_sum / h_count belong to a histogram or summary "h" that was rejected.
  auto OfRejectedFamily = [](const std::string& name, const auto& fams) {
    for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
      if (name.size() > suffix.size() && name.ends_with(suffix)) {
        auto it = fams.find(name.substr(0, name.size() - suffix.size()));
        if (it != fams.end() && it->second.rejected) return true;
      }
    }
    return false;
  };
  // A new family only while under the cap (null: over it).
  auto family = [&](const std::string& name) -> FamilyState* {
    auto it = families.find(name);
    if (it != families.end()) return &it->second;
    if (families.size() >= max_series) return nullptr;
    result.families.push_back(prometheus::MetricFamily{name, "", prometheus::MetricType::Untyped, {}});
    FamilyState st;
    st.index = result.families.size() - 1;
    return &families.emplace(name, std::move(st)).first->second;
  };

  size_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (nl == text.size() && line.empty()) break;
    ExpositionLine parsed;
    std::string reason;
    if (!ParseExpositionLine(line, &parsed, &reason)) {
      error(line_no, std::move(reason));
      continue;
    }
    switch (parsed.kind) {
      case LineKind::kBlank:
      case LineKind::kComment:
        break;
      case LineKind::kHelp: {
        FamilyState* st = family(parsed.name);
        if (st != nullptr) result.families[st->index].help = parsed.text;
        break;
      }
      case LineKind::kType: {
        FamilyState* fst = family(parsed.name);
        if (fst == nullptr) break;  // over the cap: its samples are counted when they come
        FamilyState& st = *fst;
        if (st.typed || st.has_samples) {
          error(line_no, "TYPE for '" + parsed.name + "' after its samples or a previous TYPE");
          break;
        }
        st.typed = true;
        auto& f = result.families[st.index];
        if (parsed.text == "counter") f.type = prometheus::MetricType::Counter;
        else if (parsed.text == "gauge") f.type = prometheus::MetricType::Gauge;
        else if (parsed.text == "untyped") f.type = prometheus::MetricType::Untyped;
        else {
          st.rejected = true;
          error(line_no, parsed.text + " family '" + parsed.name + "' is not supported");
        }
        break;
      }
      case LineKind::kSample: {
        if (OfRejectedFamily(parsed.name, families)) {
          error(line_no, "sample of unsupported family '" + parsed.name + "'");
          break;
        }
        FamilyState* fst = kept_series < max_series ? family(parsed.name) : nullptr;
        if (fst == nullptr) {
          ++result.series_dropped;
          break;
        }
        FamilyState& st = *fst;
        if (st.rejected) {
          error(line_no, "sample of unsupported family '" + parsed.name + "'");
          break;
        }
        auto key = parsed.sample.labels;
        std::sort(key.begin(), key.end());
        if (!st.series.insert(key).second) {
          error(line_no, "duplicate series for '" + parsed.name + "'");
          break;
        }
        ++kept_series;
        st.has_samples = true;
        auto& f = result.families[st.index];
        prometheus::ClientMetric m;
        m.label = std::move(parsed.sample.labels);
        m.timestamp_ms = parsed.sample.timestamp_ms;
        switch (f.type) {
          case prometheus::MetricType::Counter: m.counter.value = parsed.sample.value; break;
          case prometheus::MetricType::Gauge: m.gauge.value = parsed.sample.value; break;
          default: m.untyped.value = parsed.sample.value; break;
        }
        f.metric.push_back(std::move(m));
        break;
      }
    }
  }
  // Drop families that ended up without samples (HELP/TYPE only).
  std::erase_if(result.families, [](const prometheus::MetricFamily& f) { return f.metric.empty(); });
  return result;
}

}  // namespace mt::exporter
