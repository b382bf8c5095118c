#include "tools/logs/log_line.h"

#include <cstring>

#include "tools/common/iso_time.h"

namespace mt::tools {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool TwoDigits(std::string_view s, size_t pos, int* out) {
  if (pos + 2 > s.size() || !IsDigit(s[pos]) || !IsDigit(s[pos + 1])) return false;
  *out = (s[pos] - '0') * 10 + (s[pos + 1] - '0');
  return true;
}

// "HH:MM:SS[.frac]" at s[pos]; advances pos past it.
bool ClockAt(std::string_view s, size_t* pos, LogLine* out) {
  size_t p = *pos;
  int h, m, sec;
  if (!TwoDigits(s, p, &h) || p + 8 > s.size() || s[p + 2] != ':' || !TwoDigits(s, p + 3, &m) ||
      s[p + 5] != ':' || !TwoDigits(s, p + 6, &sec))
    return false;
  if (h > 23 || m > 59 || sec > 60) return false;
  p += 8;
  if (p < s.size() && (s[p] == '.' || s[p] == ',')) {
    ++p;
    while (p < s.size() && IsDigit(s[p])) ++p;
  }
  out->hour = h;
  out->minute = m;
  out->second = sec;
  *pos = p;
  return true;
}

// absl: "I0224 19:21:00.123456 140234 file.cc:77] " (thread id optional).
bool AbslPrefix(std::string_view s, LogLine* out, size_t* consumed) {
  if (s.size() < 15) return false;
  char sev = s[0];
  if (sev != 'I' && sev != 'W' && sev != 'E' && sev != 'F') return false;
  int mo, d;
  if (!TwoDigits(s, 1, &mo) || !TwoDigits(s, 3, &d) || s[5] != ' ') return false;
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return false;
  size_t p = 6;
  LogLine tmp;
  if (!ClockAt(s, &p, &tmp)) return false;
  // Up to "] " within a short distance (thread id and file:line).
  size_t close = s.find("] ", p);
  if (close == std::string_view::npos || close - p > 96) {
    if (s.size() >= 1 && s.back() == ']' && s.size() - p <= 96) close = s.size() - 1;
    else return false;
  }
  out->severity = sev;
  out->month = mo;
  out->day = d;
  out->hour = tmp.hour;
  out->minute = tmp.minute;
  out->second = tmp.second;
  out->has_time = true;
  *consumed = std::min(close + 2, s.size());
  return true;
}

// "2026-02-24 19:21:00,123 ", "2026-02-24T19:21:00Z ", optionally inside "[...]".
bool IsoPrefix(std::string_view s, LogLine* out, size_t* consumed) {
  size_t p = 0;
  bool bracket = !s.empty() && s[0] == '[';
  if (bracket) p = 1;
  if (s.size() < p + 19) return false;
  int y1, y2, mo, d;
  if (!TwoDigits(s, p, &y1) || !TwoDigits(s, p + 2, &y2) || s[p + 4] != '-' ||
      !TwoDigits(s, p + 5, &mo) || s[p + 7] != '-' || !TwoDigits(s, p + 8, &d))
    return false;
  if (s[p + 10] != 'T' && s[p + 10] != ' ') return false;
  size_t q = p + 11;
  LogLine tmp;
  if (!ClockAt(s, &q, &tmp)) return false;
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return false;
  int offset = 0;
  if (q < s.size() && s[q] == 'Z') {
    ++q;
  } else if (q + 6 <= s.size() && (s[q] == '+' || s[q] == '-')) {
    int oh, om;
    if (TwoDigits(s, q + 1, &oh) && s[q + 3] == ':' && TwoDigits(s, q + 4, &om)) {
      offset = (oh * 3600 + om * 60) * (s[q] == '+' ? 1 : -1);
      q += 6;
    }
  }
  if (bracket) {
    if (q >= s.size() || s[q] != ']') return false;
    ++q;
  }
  if (q < s.size() && s[q] != ' ' && s[q] != '\t') return false;
  while (q < s.size() && (s[q] == ' ' || s[q] == '\t')) ++q;
  out->year = y1 * 100 + y2;
  out->month = mo;
  out->day = d;
  out->hour = tmp.hour;
  out->minute = tmp.minute;
  out->second = tmp.second;
  out->has_time = true;
  out->utc_offset = offset;
  *consumed = q;
  return true;
}

}  // namespace

LogLine SplitLogLine(std::string_view s) {
  LogLine out;
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  // srun -l label: optional blanks, digits, ':' and an optional blank.
  size_t p = 0;
  while (p < s.size() && s[p] == ' ') ++p;
  size_t digits = p;
  while (p < s.size() && IsDigit(s[p]) && p - digits < 7) ++p;
  if (p > digits && p < s.size() && s[p] == ':') {
    // A "12:34:56" clock is not a task label.
    bool clock = p + 2 < s.size() && IsDigit(s[p + 1]) && IsDigit(s[p + 2]);
    if (!clock) {
      int r = 0;
      for (size_t i = digits; i < p; ++i) r = r * 10 + (s[i] - '0');
      out.rank = r;
      s.remove_prefix(p + 1);
      if (!s.empty() && s[0] == ' ') s.remove_prefix(1);
    }
  }
  size_t consumed = 0;
  if (!s.empty()) {
    if (AbslPrefix(s, &out, &consumed) || IsoPrefix(s, &out, &consumed)) s.remove_prefix(consumed);
  }
  out.content = s;
  return out;
}

int64_t LineTime(const LogLine& line, int64_t reference) {
  if (!line.has_time) return kNoTime;
  if (line.year != 0)
    return UnixFromCivil(line.year, line.month, line.day, line.hour, line.minute, line.second) -
           line.utc_offset;
  int year = CivilYear(reference);
  int64_t t = UnixFromCivil(year, line.month, line.day, line.hour, line.minute, line.second);
  if (t > reference + 86400) t = UnixFromCivil(year - 1, line.month, line.day, line.hour, line.minute, line.second);
  return t;
}

bool HasAnsi(std::string_view text) { return text.find('\x1b') != std::string_view::npos; }

std::string StripAnsi(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c != '\x1b') {
      out.push_back(c);
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '[') {
      size_t j = i + 2;
      while (j < text.size() && !(text[j] >= 0x40 && text[j] <= 0x7e)) ++j;
      i = j;   // skips the final byte too
    } else if (i + 1 < text.size() && text[i + 1] == '(') {
      i += 2;  // charset selection such as tput's "\x1b(B"
    }
  }
  return out;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
    text.remove_suffix(1);
  return text;
}

}  // namespace mt::tools
