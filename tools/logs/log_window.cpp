#include "tools/logs/log_window.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstring>
#include <deque>
#include <memory>
#include <stdexcept>

#include <re2/re2.h>

#include "tools/logs/log_line.h"
#include "tools/logs/log_scanner.h"

namespace mt::tools {
namespace {

constexpr size_t kBlock = 1 << 20;
constexpr size_t kMaxLineKept = 64 * 1024;   // longer lines are examined by their start

struct Range {
  bool from_end = false;
  int64_t a = 1, b = INT64_MAX;
};

int64_t ParseNum(std::string_view s, const std::string& whole) {
  int64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size())
    throw std::invalid_argument("lines: '" + whole + "' is not A:B, A:, :B or -N: (1-based line numbers)");
  return v;
}

Range ParseRange(const std::string& spec) {
  Range r;
  if (spec.empty()) return r;
  size_t colon = spec.find(':');
  std::string_view a = std::string_view(spec).substr(0, colon);
  std::string_view b = colon == std::string::npos ? std::string_view() : std::string_view(spec).substr(colon + 1);
  if (colon == std::string::npos) {   // a single line number
    r.a = r.b = ParseNum(a, spec);
  } else {
    if (!a.empty()) {
      if (a[0] == '-') {
        r.from_end = true;
        r.a = ParseNum(a.substr(1), spec);
        if (r.a <= 0) throw std::invalid_argument("lines: -N needs N > 0");
      } else {
        r.a = ParseNum(a, spec);
      }
    }
    if (!b.empty()) r.b = ParseNum(b, spec);
  }
  if (!r.from_end && (r.a < 1 || r.b < r.a))
    throw std::invalid_argument("lines: '" + spec + "' must satisfy 1 <= A <= B");
  return r;
}

struct File {
  int fd = -1;
  ~File() {
    if (fd >= 0) ::close(fd);
  }
};

// Calls fn(line_no, text) for every line; stops when fn returns false.
template <typename Fn>
void ForEachLine(const std::filesystem::path& path, Fn fn) {
  File f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (f.fd < 0) throw std::runtime_error("cannot open " + path.string() + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode))
    throw std::runtime_error(path.string() + " is not a regular file");
  std::unique_ptr<char[]> buf(new char[kBlock]);
  std::string carry;   // a line spanning blocks (its first kMaxLineKept bytes)
  bool carrying = false;
  uint64_t line = 0;
  for (;;) {
    ssize_t n = ::read(f.fd, buf.get(), kBlock);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("cannot read " + path.string() + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    const char* p = buf.get();
    const char* end = p + n;
    while (p < end) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      const char* stop = nl ? nl : end;
      if (carrying || !nl) {
        size_t room = kMaxLineKept > carry.size() ? kMaxLineKept - carry.size() : 0;
        carry.append(p, std::min(room, static_cast<size_t>(stop - p)));
        carrying = true;
        if (!nl) break;
        if (!fn(++line, std::string_view(carry))) return;
        carry.clear();
        carrying = false;
      } else if (!fn(++line, std::string_view(p, static_cast<size_t>(stop - p)))) {
        return;
      }
      p = stop + 1;
    }
  }
  if (carrying) fn(++line, std::string_view(carry));
}

uint64_t CountLines(const std::filesystem::path& path) {
  uint64_t n = 0;
  ForEachLine(path, [&](uint64_t, std::string_view) {
    ++n;
    return true;
  });
  return n;
}

}  // namespace

Window ReadWindow(const std::filesystem::path& file, const WindowRequest& req) {
  Range range = ParseRange(req.lines);
  if (req.context < 0 || req.context > 20) throw std::invalid_argument("context must be between 0 and 20");
  std::unique_ptr<RE2> re;
  if (!req.grep.empty()) {
    RE2::Options o;
    o.set_log_errors(false);
    o.set_max_mem(8 << 20);
    re = std::make_unique<RE2>(req.grep, o);
    if (!re->ok()) throw std::invalid_argument("grep: invalid regular expression: " + re->error());
  }
  Window w;
  if (range.from_end) {
    uint64_t total = CountLines(file);
    w.total_lines = total;
    range.a = total > static_cast<uint64_t>(range.a) ? static_cast<int64_t>(total) - range.a + 1 : 1;
    range.b = INT64_MAX;
  }
  size_t chars = 0;
  std::deque<WindowLine> before;          // context before the next match
  int after_left = 0;                     // context lines still owed after a match
  uint64_t last_emitted = 0;
  bool reached_end = true;
  auto emit = [&](WindowLine&& l) -> bool {
    if (w.lines.size() >= req.max_lines || chars + l.text.size() > req.max_total_chars) {
      w.truncated = true;
      return false;
    }
    chars += l.text.size() + 16;
    last_emitted = l.line;
    w.lines.push_back(std::move(l));
    return true;
  };
  auto make = [&](uint64_t n, std::string_view raw, const LogLine& ll, bool match) {
    WindowLine l;
    l.line = n;
    l.rank = ll.rank;
    l.match = match;
    std::string_view t = raw;
    if (!t.empty() && t.back() == '\r') t.remove_suffix(1);
    std::string text = HasAnsi(t) ? StripAnsi(t) : std::string(t);
    if (text.size() > req.max_line_chars) {
      size_t cut = req.max_line_chars;
      while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;   // UTF-8 boundary
      text = text.substr(0, cut) + " …[" + std::to_string(raw.size() - cut) + " more bytes]";
    }
    l.text = std::move(text);
    return l;
  };
  ForEachLine(file, [&](uint64_t n, std::string_view raw) {
    if (static_cast<int64_t>(n) < range.a) return true;
    if (static_cast<int64_t>(n) > range.b) {
      reached_end = false;
      return false;
    }
    if (!w.first_line) w.first_line = n;
    w.last_line = n;
    LogLine ll = SplitLogLine(raw.substr(0, std::min<size_t>(raw.size(), 256)));
    if (req.rank && ll.rank != *req.rank) return true;
    if (!re) {
      if (!emit(make(n, raw, ll, false))) {
        reached_end = false;
        return false;
      }
      return true;
    }
    bool match = RE2::PartialMatch(raw, *re);
    if (match) {
      ++w.matches;
      if (w.truncated) return true;   // keep counting matches only
      while (!before.empty()) {
        if (before.front().line > last_emitted && !emit(std::move(before.front()))) break;
        before.pop_front();
      }
      before.clear();
      if (!emit(make(n, raw, ll, true))) return true;
      after_left = req.context;
    } else if (!w.truncated) {
      if (after_left > 0) {
        --after_left;
        emit(make(n, raw, ll, false));
      } else if (req.context > 0) {
        before.push_back(make(n, raw, ll, false));
        if (before.size() > static_cast<size_t>(req.context)) before.pop_front();
      }
    }
    return true;
  });
  if (reached_end && range.b == INT64_MAX && !w.total_lines) w.total_lines = w.last_line;
  if (w.truncated && last_emitted) w.resume = std::to_string(last_emitted + 1) + ":";
  return w;
}

}  // namespace mt::tools
