#include "tools/logs/log_clock.h"

#include <array>
#include <cstdlib>
#include <cstring>

#include "base/iso_time.h"

namespace mt::tools {
namespace {

constexpr int64_t kNone = INT64_MIN;

bool Digit(char c) { return c >= '0' && c <= '9'; }
bool Alnum(char c) { return Digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool Num(std::string_view s, size_t p, size_t n, int* out) {
  if (p + n > s.size()) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!Digit(s[p + i])) return false;
    v = v * 10 + (s[p + i] - '0');
  }
  *out = v;
  return true;
}

// "HH:MM:SS" at p, optional fraction; returns the position after it or 0.
size_t Clock(std::string_view s, size_t p, Stamp* st) {
  int h, m, sec;
  if (!Num(s, p, 2, &h) || p + 8 > s.size() || s[p + 2] != ':' || !Num(s, p + 3, 2, &m) || s[p + 5] != ':' ||
      !Num(s, p + 6, 2, &sec))
    return 0;
  if (h > 23 || m > 59 || sec > 60) return 0;
  size_t q = p + 8;
  if (q < s.size() && Digit(s[q])) return 0;
  if (q + 1 < s.size() && (s[q] == '.' || s[q] == ',') && Digit(s[q + 1])) {
    ++q;
    while (q < s.size() && Digit(s[q])) ++q;
  }
  st->hour = h;
  st->minute = m;
  st->second = sec;
  return q;
}

bool ValidDate(int mo, int d) { return mo >= 1 && mo <= 12 && d >= 1 && d <= 31; }

// Optional zone after a clock: Z, +HH:MM, +HHMM, " UTC", " GMT".
void Zone(std::string_view s, size_t q, Stamp* st) {
  if (q < s.size() && s[q] == 'Z') return;
  int oh, om;
  if (q + 5 <= s.size() && (s[q] == '+' || s[q] == '-') && Num(s, q + 1, 2, &oh)) {
    size_t m = s[q + 3] == ':' ? q + 4 : q + 3;
    if (Num(s, m, 2, &om) && oh <= 14 && om < 60) st->utc_offset = (oh * 3600 + om * 60) * (s[q] == '+' ? 1 : -1);
  }
}

// 2026-02-24 19:21:00, 2026-02-24T19:21:00.123Z, 2024/12/17 16:03:58, 2023-05-19_16:39:58.
bool IsoAt(std::string_view s, size_t p, Stamp* st) {
  int y, mo, d;
  if (!Num(s, p, 4, &y) || y < 1990 || y > 2100 || p + 10 > s.size()) return false;
  char sep = s[p + 4];
  if ((sep != '-' && sep != '/') || s[p + 7] != sep || !Num(s, p + 5, 2, &mo) || !Num(s, p + 8, 2, &d)) return false;
  if (!ValidDate(mo, d) || p + 11 > s.size()) return false;
  char t = s[p + 10];
  if (t != 'T' && t != ' ' && t != '_') return false;
  size_t q = Clock(s, p + 11, st);
  if (!q) return false;
  st->year = y;
  st->month = mo;
  st->day = d;
  st->layout = "iso";
  Zone(s, q, st);
  return true;
}

// 22-09-01 02:31:11 (two-digit year, as some loggers print).
bool ShortIsoAt(std::string_view s, size_t p, Stamp* st) {
  int y, mo, d;
  if (p > 0 && Digit(s[p - 1])) return false;
  if (!Num(s, p, 2, &y) || p + 9 > s.size() || s[p + 2] != '-' || s[p + 5] != '-' || !Num(s, p + 3, 2, &mo) ||
      !Num(s, p + 6, 2, &d) || s[p + 8] != ' ' || !ValidDate(mo, d))
    return false;
  if (!Clock(s, p + 9, st)) return false;
  st->year = 2000 + y;
  st->month = mo;
  st->day = d;
  st->layout = "iso_short_year";
  return true;
}

int MonthIndex(std::string_view s, size_t p) {
  static const std::array<const char*, 12> names = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (p + 3 > s.size()) return 0;
  for (size_t i = 0; i < names.size(); ++i)
    if (std::memcmp(s.data() + p, names[i], 3) == 0) return static_cast<int>(i) + 1;
  return 0;
}

bool Weekday(std::string_view s, size_t p) {
  static const std::array<const char*, 7> names = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  if (p + 4 > s.size() || s[p + 3] != ' ') return false;
  for (const char* n : names)
    if (std::memcmp(s.data() + p, n, 3) == 0) return true;
  return false;
}

// date(1): "Mon Nov 23 19:37:07 UTC 2026", "Wed Apr 22 09:42:45 2026"; journal "Dec 17 16:03:58".
bool DateAt(std::string_view s, size_t p, Stamp* st) {
  size_t q = p;
  bool weekday = Weekday(s, q);
  if (weekday) q += 4;
  int mo = MonthIndex(s, q);
  if (!mo || q + 4 > s.size() || s[q + 3] != ' ') return false;
  q += 4;
  if (q < s.size() && s[q] == ' ') ++q;   // "Feb  2"
  int d;
  size_t dn = q + 1 < s.size() && Digit(s[q + 1]) ? 2 : 1;
  if (!Num(s, q, dn, &d) || !ValidDate(mo, d) || q + dn >= s.size() || s[q + dn] != ' ') return false;
  q += dn + 1;
  size_t e = Clock(s, q, st);
  if (!e) return false;
  st->month = mo;
  st->day = d;
  st->layout = weekday ? "date" : "journal";
  // Optional zone word and year: " UTC 2026", " 2026", "Z".
  size_t r = e;
  if (r < s.size() && s[r] == 'Z') ++r;
  if (r < s.size() && s[r] == ' ') {
    size_t w = r + 1;
    size_t z = w;
    while (z < s.size() && z - w < 5 && s[z] >= 'A' && s[z] <= 'Z') ++z;
    if (z > w && z < s.size() && s[z] == ' ') w = z + 1;
    int y;
    if (Num(s, w, 4, &y) && y >= 1990 && y <= 2100 && (w + 4 == s.size() || !Digit(s[w + 4]))) st->year = y;
  }
  return true;
}

// absl/glog: "I0224 19:21:00.123456 …" and "I 05-04 00:52:46 …" (severity first).
bool AbslAt(std::string_view s, size_t p, Stamp* st) {
  char sev = s[p];
  if (sev != 'I' && sev != 'W' && sev != 'E' && sev != 'F' && sev != 'D') return false;
  int mo, d;
  if (Num(s, p + 1, 2, &mo) && Num(s, p + 3, 2, &d) && p + 6 < s.size() && s[p + 5] == ' ' && ValidDate(mo, d) &&
      Clock(s, p + 6, st)) {
    st->month = mo;
    st->day = d;
    st->layout = "absl";
    return true;
  }
  if (p + 2 < s.size() && s[p + 1] == ' ' && Num(s, p + 2, 2, &mo) && p + 5 < s.size() && s[p + 4] == '-' &&
      Num(s, p + 5, 2, &d) && p + 8 < s.size() && s[p + 7] == ' ' && ValidDate(mo, d) && Clock(s, p + 8, st)) {
    st->month = mo;
    st->day = d;
    st->layout = "glog";
    return true;
  }
  return false;
}

// A bare "HH:MM:SS" that opens the line or a bracket: a clock without a date.
bool TimeOnlyAt(std::string_view s, size_t p, Stamp* st) {
  if (p > 0 && s[p - 1] != '[') return false;
  size_t q = Clock(s, p, st);
  if (!q) return false;
  if (q < s.size() && (s[q] == '<' || s[q] == ':')) return false;   // a progress-bar clock
  st->layout = "time";
  return true;
}

}  // namespace

std::optional<Stamp> FindStamp(std::string_view s, size_t window) {
  const size_t end = std::min(s.size(), window);
  for (size_t p = 0; p < end; ++p) {
    char c = s[p];
    if (p > 0 && Alnum(s[p - 1]) && !(Digit(c) && s[p - 1] == 'T')) continue;   // inside a word
    Stamp st;
    if (Digit(c)) {
      if (IsoAt(s, p, &st) || ShortIsoAt(s, p, &st) || TimeOnlyAt(s, p, &st)) return st;
    } else if (c >= 'A' && c <= 'Z') {
      if (AbslAt(s, p, &st) || DateAt(s, p, &st)) return st;
    }
  }
  return std::nullopt;
}

int64_t StampSeconds(const Stamp& s) {
  return base::UnixFromCivil(s.year, s.month, s.day, s.hour, s.minute, s.second) - s.utc_offset;
}

int64_t LogClock::Resolve(const Stamp& in) {
  Stamp s = in;
  int64_t t;
  if (s.year != 0) {
    t = StampSeconds(s);
    anchored_ = true;
  } else if (s.month != 0) {
    // The year that puts the stamp nearest the anchor (a log rarely spans months), or,
    // before any dated stamp, the year that is not after the reference + 1 day.
    year_inferred_ = true;
    const int64_t base = anchor_ != kNone ? anchor_ : reference_;
    const int y0 = base::CivilYear(base);
    if (anchor_ != kNone) {
      int64_t best = kNone;
      for (int y : {y0 - 1, y0, y0 + 1}) {
        s.year = y;
        int64_t c = StampSeconds(s);
        if (best == kNone || std::llabs(c - base) < std::llabs(best - base)) best = c;
      }
      t = best;
    } else {
      s.year = y0;
      t = StampSeconds(s);
      if (t > base + 86400) {
        s.year = y0 - 1;
        t = StampSeconds(s);
      }
    }
  } else {
    // Time only: the anchor's date, the next day when the clock wrapped past midnight.
    if (anchor_ == kNone) return kNone;
    const int64_t day = anchor_ - ((anchor_ % 86400) + 86400) % 86400;
    t = day + s.hour * 3600 + s.minute * 60 + s.second;
    if (t < anchor_ - 3600) t += 86400;
  }
  if (anchor_ == kNone || t > anchor_ || s.year != 0) anchor_ = t;
  return t;
}

}  // namespace mt::tools
