#include "base/iso_time.h"

#include <cstdio>

namespace mt::base {
namespace {

// Howard Hinnant's days_from_civil / civil_from_days (public-domain algorithms).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Reads exactly `n` digits at text[*pos].
bool Digits(std::string_view text, size_t* pos, int n, int* out) {
  if (*pos + static_cast<size_t>(n) > text.size()) return false;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    char c = text[*pos + static_cast<size_t>(i)];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += static_cast<size_t>(n);
  *out = v;
  return true;
}

bool Expect(std::string_view text, size_t* pos, char c) {
  if (*pos >= text.size() || text[*pos] != c) return false;
  ++*pos;
  return true;
}

}  // namespace

int64_t UnixFromCivil(int year, int month, int day, int hour, int minute, int second) {
  return DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
         hour * 3600 + minute * 60 + second;
}

int CivilYear(int64_t unix_seconds) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(FloorDiv(unix_seconds, 86400), &y, &m, &d);
  return static_cast<int>(y);
}

std::optional<int64_t> ParseIso8601(std::string_view text) {
  size_t pos = 0;
  int y, mo, d, h = 0, mi = 0, s = 0;
  if (!Digits(text, &pos, 4, &y) || !Expect(text, &pos, '-') || !Digits(text, &pos, 2, &mo) ||
      !Expect(text, &pos, '-') || !Digits(text, &pos, 2, &d))
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return std::nullopt;
  if (pos < text.size()) {
    if (text[pos] != 'T' && text[pos] != 't' && text[pos] != ' ') return std::nullopt;
    ++pos;
    if (!Digits(text, &pos, 2, &h) || !Expect(text, &pos, ':') || !Digits(text, &pos, 2, &mi))
      return std::nullopt;
    if (pos < text.size() && text[pos] == ':') {
      ++pos;
      if (!Digits(text, &pos, 2, &s)) return std::nullopt;
      if (pos < text.size() && (text[pos] == '.' || text[pos] == ',')) {
        ++pos;
        size_t start = pos;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
        if (pos == start) return std::nullopt;
      }
    }
    if (h > 23 || mi > 59 || s > 60) return std::nullopt;
  }
  int64_t offset = 0;
  if (pos < text.size()) {
    char z = text[pos];
    if (z == 'Z' || z == 'z') {
      ++pos;
    } else if (z == '+' || z == '-') {
      ++pos;
      int oh, om = 0;
      if (!Digits(text, &pos, 2, &oh)) return std::nullopt;
      if (pos < text.size() && text[pos] == ':') ++pos;
      if (pos < text.size() && !Digits(text, &pos, 2, &om)) return std::nullopt;
      if (oh > 23 || om > 59) return std::nullopt;
      offset = (oh * 3600 + om * 60) * (z == '+' ? 1 : -1);
    }
  }
  if (pos != text.size()) return std::nullopt;
  return UnixFromCivil(y, mo, d, h, mi, s) - offset;
}

std::string FormatIso8601(int64_t unix_seconds) {
  int64_t days = FloorDiv(unix_seconds, 86400);
  int64_t rem = unix_seconds - days * 86400;
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02d:%02d:%02dZ", static_cast<long long>(y), m,
                d, static_cast<int>(rem / 3600), static_cast<int>(rem % 3600 / 60),
                static_cast<int>(rem % 60));
  return buf;
}

}  // namespace mt::base
