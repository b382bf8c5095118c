#include "tools/perf/hlo_collectives.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/workspace_files.h"

#include <array>
#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace mt::tools {
namespace {

constexpr std::array<std::string_view, 5> kCollectives = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                                                          "collective-permute"};

uint64_t ElementBytes(std::string_view t) {
  if (t == "pred" || t == "s8" || t == "u8" || t.substr(0, 2) == "f8" || t.substr(0, 2) == "s4" || t.substr(0, 2) == "u4") return 1;
  if (t == "bf16" || t == "f16" || t == "s16" || t == "u16") return 2;
  if (t == "f32" || t == "s32" || t == "u32") return 4;
  if (t == "f64" || t == "s64" || t == "u64" || t == "c64") return 8;
  if (t == "c128") return 16;
  return 0;
}

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Element `index` of a tuple shape "(a, b, …)" at nesting depth 1; the shape itself when
// it is not a tuple or has fewer elements.
std::string_view TupleElement(std::string_view s, size_t index) {
  if (s.size() < 2 || s[0] != '(') return s;
  int depth = 0;
  size_t start = 1, n = 0;
  for (size_t i = 1; i < s.size(); ++i) {
    char c = s[i];
    if (c == '(' || c == '[' || c == '{') ++depth;
    else if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    else if ((c == ',' && depth == 0) || (c == ')' && depth == 0)) {
      if (n == index) return s.substr(start, i - start);
      ++n;
      start = i + 1;
    }
  }
  return s;
}

}  // namespace

uint64_t HloShapeBytes(std::string_view s) {
  uint64_t total = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t br = s.find('[', i);
    if (br == std::string_view::npos) break;
    size_t t0 = br;
    while (t0 > i && IsIdentChar(s[t0 - 1])) --t0;
    std::string_view type = s.substr(t0, br - t0);
    size_t close = s.find(']', br);
    if (close == std::string_view::npos) break;
    uint64_t elems = 1;
    uint64_t dim = 0;
    bool any = false;
    for (size_t k = br + 1; k < close; ++k) {
      char c = s[k];
      if (c >= '0' && c <= '9') {
        dim = dim * 10 + static_cast<uint64_t>(c - '0');
        any = true;
      } else if (c == ',') {
        elems *= dim;
        dim = 0;
      }
    }
    if (any) elems *= dim;
    total += elems * ElementBytes(type);
    i = close + 1;
  }
  return total;
}

HloCollectives ScanHloCollectivesText(std::string_view text) {
  HloCollectives out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++out.lines;
    size_t eq = line.find(" = ");
    if (eq == std::string_view::npos) continue;
    ++out.instructions;
    // "<shape> <op>(" follows the '='; the op is the identifier just before the first '('
    // that is not part of the shape (tuple shapes start with '(' themselves).
    std::string_view rhs = line.substr(eq + 3);
    size_t shape_end = 0;
    if (!rhs.empty() && rhs[0] == '(') {
      int depth = 0;
      for (; shape_end < rhs.size(); ++shape_end) {
        if (rhs[shape_end] == '(') ++depth;
        else if (rhs[shape_end] == ')' && --depth == 0) {
          ++shape_end;
          break;
        }
      }
    } else {
      shape_end = rhs.find(' ');
      if (shape_end == std::string_view::npos) continue;
    }
    std::string_view shape = rhs.substr(0, shape_end);
    std::string_view rest = rhs.substr(shape_end);
    size_t a = rest.find_first_not_of(' ');
    if (a == std::string_view::npos) continue;
    size_t paren = rest.find('(', a);
    if (paren == std::string_view::npos) continue;
    std::string_view op = rest.substr(a, paren - a);
    bool async = false;
    if (op.size() > 6 && op.substr(op.size() - 6) == "-start") {
      op.remove_suffix(6);
      async = true;
    } else if (op.size() > 5 && op.substr(op.size() - 5) == "-done") {
      continue;   // counted at its -start
    }
    for (std::string_view k : kCollectives) {
      if (op != k) continue;
      CollectiveKind& c = out.kinds[std::string(k)];
      ++c.count;
      if (async) ++c.async_count;
      // An async start's result is a tuple (operand, output[, context…]): count the
      // output, its second element.
      uint64_t bytes = HloShapeBytes(async ? TupleElement(shape, 1) : shape);
      c.bytes += bytes;
      if (bytes > c.max_bytes) c.max_bytes = bytes;
    }
  }
  return out;
}

HloCollectives ScanHloCollectives(const std::filesystem::path& file) {
  // A regular file only (never a FIFO or device), and never more than the 512 MiB that
  // perf_analysis admits, however large the file has grown since it was listed.
  auto f = base::OpenRegularFile(nullptr, file);
  if (!f.ok()) throw std::runtime_error("cannot read HLO dump: " + f.message());
  constexpr size_t kMax = size_t(512) << 20;
  std::string text;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(f->fd(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error("cannot read HLO dump " + file.filename().string() + ": " + std::strerror(errno));
    if (n == 0) break;
    if (text.size() + size_t(n) > kMax) throw std::runtime_error("HLO dump " + file.filename().string() + " is larger than 512 MiB; not parsed");
    text.append(buf, size_t(n));
  }
  return ScanHloCollectivesText(text);
}

}  // namespace mt::tools
