#include "exporter/step_line.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace mt::exporter {

namespace {

// Number right after "<key>" (skipping blanks), e.g. Number(line, "seconds:").
std::optional<double> Number(std::string_view line, std::string_view key) {
  size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + key.size());
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  size_t n = 0;
  while (n < rest.size() && (std::isalnum(static_cast<unsigned char>(rest[n])) || rest[n] == '.' ||
                             rest[n] == '-' || rest[n] == '+')) {
    ++n;
  }
  double v = 0;
  auto [p, ec] = std::from_chars(rest.data(), rest.data() + n, v);
  if (ec != std::errc() || p == rest.data()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<StepLine> ParseStepLine(std::string_view line) {
  size_t at = line.find("completed step:");
  if (at == std::string_view::npos) return std::nullopt;
  StepLine s;
  // Rank prefix: optional blanks, digits, ':' at the start of the line.
  std::string_view head = line.substr(0, at);
  size_t i = 0;
  while (i < head.size() && head[i] == ' ') ++i;
  size_t d = i;
  while (d < head.size() && std::isdigit(static_cast<unsigned char>(head[d]))) ++d;
  if (d > i && d < head.size() && head[d] == ':') {
    int r = 0;
    std::from_chars(head.data() + i, head.data() + d, r);
    s.rank = r;
  }
  auto step = Number(line.substr(at), "completed step:");
  auto seconds = Number(line.substr(at), "seconds:");
  if (!step || !seconds || *step < 0 || std::floor(*step) != *step) return std::nullopt;
  s.step = static_cast<int64_t>(*step);
  s.seconds = *seconds;
  s.tokens_per_sec = Number(line.substr(at), "Tokens/s/device:");
  s.loss = Number(line.substr(at), "loss:");
  return s;
}

}  // namespace mt::exporter
