#include "tools/trace/trace_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "tools/trace/event_classes.h"

namespace mt::tools::trace {
namespace {

double PerStep(const TraceAnalysis& a) { return std::max<double>(1.0, static_cast<double>(a.per_step.size())); }

std::string Ms(double us) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.2f ms", us / 1000);
  return b;
}

}  // namespace

TraceDiff DiffTraces(const TraceAnalysis& base, const TraceAnalysis& test) {
  TraceDiff d;
  const SteadyFigures &b = base.steady, &t = test.steady;
  struct Cat { const char* name; std::optional<double> SteadyFigures::*us; double Shares::*share; };
  const Cat cats[] = {{"step_time", &SteadyFigures::step_time_us, nullptr},
                      {"compute", &SteadyFigures::compute_us, &Shares::compute},
                      {"comm", &SteadyFigures::comm_us, &Shares::comm},
                      {"exposed_comm", &SteadyFigures::exposed_comm_us, &Shares::exposed_comm},
                      {"memcpy_memset_exposed", &SteadyFigures::memcpy_memset_exposed_us, &Shares::memcpy_memset_exposed},
                      {"idle", &SteadyFigures::idle_us, &Shares::idle}};
  for (const Cat& c : cats) {
    CategoryDelta cd;
    cd.category = c.name;
    cd.base_us = b.*c.us;
    cd.test_us = t.*c.us;
    if (cd.base_us && cd.test_us) cd.delta_us = *cd.test_us - *cd.base_us;
    if (c.share != nullptr && b.shares) cd.base_share = (*b.shares).*c.share;
    if (c.share != nullptr && t.shares) cd.test_share = (*t.shares).*c.share;
    d.categories.push_back(cd);
  }
  std::map<std::string, OpDelta> ops;
  for (const OpTotal& o : base.ops) {
    OpDelta& x = ops[o.name];
    x.base_us = o.total_us / PerStep(base);
    x.base_count = o.count;
  }
  for (const OpTotal& o : test.ops) {
    OpDelta& x = ops[o.name];
    x.test_us = o.total_us / PerStep(test);
    x.test_count = o.count;
  }
  for (auto& [name, x] : ops) {
    x.name = name;
    x.delta_us = x.test_us - x.base_us;
    d.ops.push_back(x);
  }
  std::sort(d.ops.begin(), d.ops.end(), [](auto& a, auto& b) {
    return std::fabs(a.delta_us) != std::fabs(b.delta_us) ? std::fabs(a.delta_us) > std::fabs(b.delta_us) : a.name < b.name;
  });
  if (d.ops.size() > 10) d.ops.resize(10);
  const CategoryDelta& step = d.categories[0];
  if (!step.delta_us) {
    d.summary = "no steady steps on one side: only the kernel totals compare";
    return d;
  }
  const CategoryDelta* largest = nullptr;
  for (size_t i = 1; i < d.categories.size(); ++i) {
    const CategoryDelta& c = d.categories[i];
    if (c.category == "comm" || !c.delta_us) continue;   // exposed_comm is the part that costs time
    if (largest == nullptr || std::fabs(*c.delta_us) > std::fabs(*largest->delta_us)) largest = &c;
  }
  d.summary = "step time " + Ms(*step.delta_us) + " a step";
  if (largest != nullptr) d.summary += "; the largest change is " + largest->category + " " + Ms(*largest->delta_us);
  if (!d.ops.empty() && d.ops[0].delta_us != 0) d.summary += "; most changed op: " + CutUtf8(d.ops[0].name, 60) + " " + Ms(d.ops[0].delta_us);
  return d;
}

}  // namespace mt::tools::trace
