#include "launcher/sim/fuzz_overlay.h"

#include <cmath>
#include <cstdlib>

#include "launcher/sim/noise.h"
#include "launcher/sim/openmetrics_writer.h"

namespace mt::launch::sim {

Effect MakeEffect(Effect::Op op, const std::string& metric, const std::string& host, double t0, double t1,
                  double value, double noise) {
  Effect e;
  e.op = op;
  e.metric = metric;
  e.host = host;
  e.t0 = t0;
  e.t1 = t1;
  e.value = value;
  e.noise = noise;
  return e;
}
namespace {

bool EndsWith(const std::string& s, const char* x) {
  const size_t n = std::char_traits<char>::length(x);
  return s.size() >= n && s.compare(s.size() - n, n, x) == 0;
}

bool NameMatches(const std::string& pattern, const std::string& name) {
  if (pattern == "*") return true;
  if (!pattern.empty() && pattern.back() == '*') return name.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0;
  return pattern == name;
}

std::string HostOf(const std::string& labels) {
  const size_t p = labels.find("host=\"");
  if (p == std::string::npos) return "";
  const size_t q = labels.find('"', p + 6);
  return q == std::string::npos ? "" : labels.substr(p + 6, q - p - 6);
}

}  // namespace

bool Overlay::ApplyLine(const std::string& head, const std::string& name, const std::string& labels, double t, double* v) {
  const std::string host = HostOf(labels);
  if (host.empty()) return true;
  const bool counter = EndsWith(name, "_total");
  const bool up = name == "up";
  CounterState* cs = counter ? &counters_[head] : nullptr;
  const double dt = cs && cs->last_t >= 0 ? t - cs->last_t : 0;
  if (cs) cs->last_t = t;
  bool keep = true;
  double raw = *v;
  for (size_t i = 0; i < effects_.size(); ++i) {
    const Effect& e = effects_[i];
    if (e.host != host || !NameMatches(e.metric, name)) continue;
    if (!e.label_match.empty() && labels.find(e.label_match) == std::string::npos) continue;
    const double u = Symmetric(seed_, HashString(head) + i, static_cast<uint64_t>(t));
    const double val = e.value + e.noise * u;
    const bool inside = t >= e.t0 && t <= e.t1;
    switch (e.op) {
      case Effect::Op::kDrop:
        if (inside) {
          if (up) *v = 0;
          else keep = false;
        }
        break;
      case Effect::Op::kAdd:
        if (inside && !counter) *v += val;
        break;
      case Effect::Op::kSet:
        if (inside && !counter) *v = val;
        break;
      case Effect::Op::kRamp: {
        if (counter || t < e.t0) break;
        const std::string key = head + "#" + std::to_string(i);
        auto it = ramp_start_.find(key);
        if (it == ramp_start_.end()) it = ramp_start_.emplace(key, *v).first;
        const double k = e.t1 > e.t0 ? std::min(1.0, (t - e.t0) / (e.t1 - e.t0)) : 1.0;
        *v = it->second + (val - it->second) * k;
        break;
      }
      case Effect::Op::kRate:
        if (cs && inside && dt > 0) cs->offset += std::max(0.0, std::floor(val * dt));
        break;
      case Effect::Op::kStep:
        if (cs && inside && t - dt < e.t0) cs->offset += e.value;  // once, at the first sample past t0
        break;
      case Effect::Op::kReset:
        if (cs && t >= e.t0 && cs->reset_base < 0) cs->reset_base = raw + cs->offset;
        break;
    }
  }
  if (cs) {
    *v = raw + cs->offset;
    if (cs->reset_base >= 0) *v -= cs->reset_base;
    *v = std::max(0.0, std::floor(*v));
  }
  return keep;
}

std::string Overlay::Apply(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    const size_t brace = line.find('{');
    const size_t close = line.find("} ");
    if (line.empty() || line[0] == '#' || brace == std::string::npos || close == std::string::npos) {
      out += line;
      out += '\n';
      continue;
    }
    const size_t sp = line.find(' ', close + 2);
    if (sp == std::string::npos) {
      out += line + "\n";
      continue;
    }
    const std::string head = line.substr(0, close + 1);
    double v = std::strtod(line.c_str() + close + 2, nullptr);
    const double t = std::strtod(line.c_str() + sp + 1, nullptr);
    if (!ApplyLine(head, line.substr(0, brace), line.substr(brace + 1, close - brace - 1), t, &v)) continue;
    out += head;
    out += ' ';
    AppendValue(out, v);
    out.append(line, sp, std::string::npos);
    out += '\n';
  }
  return out;
}

}  // namespace mt::launch::sim
