#include "tools/trace/trace_analysis.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <cctype>
#include <unordered_map>

#include "tools/trace/event_classes.h"
#include "tools/trace/intervals.h"
#include "tools/trace/trace_collectives.h"

namespace mt::tools::trace {
namespace {

using Events = std::vector<const TraceEvent*>;

// The first event (in file order) with each key: a sorted vector, lighter than a hash map
// of a million launches.
class FirstByKey {
 public:
  void Add(int64_t key, const TraceEvent* e) { v_.emplace_back(key, e); }
  void Seal() {
    std::stable_sort(v_.begin(), v_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    v_.erase(std::unique(v_.begin(), v_.end(), [](const auto& a, const auto& b) { return a.first == b.first; }), v_.end());
  }
  const TraceEvent* Find(int64_t key) const {
    auto it = std::lower_bound(v_.begin(), v_.end(), key, [](const auto& p, int64_t k) { return p.first < k; });
    return it != v_.end() && it->first == key ? it->second : nullptr;
  }

 private:
  std::vector<std::pair<int64_t, const TraceEvent*>> v_;
};

// The CPU step spans, sorted by start, and the first one that holds a time.
class StepSpans {
 public:
  explicit StepSpans(Events steps) : steps_(std::move(steps)) {
    double m = -1e300;
    for (const TraceEvent* s : steps_) {
      m = std::max(m, s->end());
      max_end_.push_back(m);
    }
  }
  const Events& steps() const { return steps_; }
  // The first step (in start order) whose [ts, end] holds t; -1 when none.
  int Of(double t) const {
    // Steps before `first` all end before t (running max of ends < t).
    size_t first = std::lower_bound(max_end_.begin(), max_end_.end(), t) - max_end_.begin();
    for (size_t k = first; k < steps_.size() && steps_[k]->ts <= t; ++k)
      if (t <= steps_[k]->end()) return static_cast<int>(k);
    return -1;
  }

 private:
  Events steps_;
  std::vector<double> max_end_;
};

StepFigures Figures(const TraceEvent& step, std::optional<double> w0, std::optional<double> w1,
                    const IntervalSet& comp, const IntervalSet& comm, const IntervalSet& mm,
                    const IntervalSet& all, const std::string& name) {
  StepFigures f;
  f.name = name;
  f.cpu_ts = step.ts;
  f.cpu_dur_us = step.dur;
  f.window_start = w0;
  f.window_end = w1;
  f.step_time_us = w0 && w1 ? *w1 - *w0 : 0.0;
  f.compute_us = Length(comp);
  f.comm_us = Length(comm);
  f.exposed_comm_us = DifferenceLength(comm, comp);
  f.memcpy_memset_us = Length(mm);
  f.memcpy_memset_exposed_us = DifferenceLength(mm, Union(comp, comm));
  f.busy_us = Length(all);
  f.idle_us = f.step_time_us - f.busy_us;
  if (f.step_time_us > 0) {
    double st = f.step_time_us;
    f.shares = Shares{f.compute_us / st, f.comm_us / st, f.exposed_comm_us / st, f.memcpy_memset_exposed_us / st,
                      f.idle_us / st};
  }
  return f;
}

class Analyser {
 public:
  Analyser(const TraceFile& t, const std::string& file) : t_(t), cls_(t) {
    out_.file = ValidUtf8(file);
    legacy_ = t.format == TraceFile::Format::kLegacy;
    out_.format = legacy_ ? "legacy" : t.format == TraceFile::Format::kXPlane ? "xplane" : "kineto";
    out_.events = t.total;
    out_.bad_x = t.bad_x;
    if (t.distributed) {
      out_.rank = t.distributed->rank;
      out_.world_size = t.distributed->world_size;
    }
    if (legacy_)
      out_.notes.push_back("legacy trace (a bare JSON array, no cat): every X event is a CPU op; ts is relative to the profiler start");
  }

  TraceAnalysis Run() {
    FindSteps();
    for (const TraceEvent& e : t_.events)
      if (cls_.IsGpu(e)) gpu_.push_back(&e);
    out_.mode = gpu_.empty() ? "cpu" : "gpu";
    if (gpu_.empty() && t_.by_cat.count("cuda_profiler_range"))
      out_.notes.push_back("cuda_profiler_range events (CUPTI profiler ranges) are not GPU activity here: the trace is analysed as CPU-only");
    std::vector<CollectiveSource> coll;
    if (!gpu_.empty()) coll = GpuSteps();
    else coll = CpuSteps();
    StepsWithoutComm();
    Steady();
    Top();
    out_.collectives = CollectiveFiguresOf(t_, cls_, coll, out_.mode == "gpu", out_.world_size);
    return std::move(out_);
  }

 private:
  bool IsCpuOp(const TraceEvent& e) const { return legacy_ || cls_.Cat(e) == CatClass::kCpuOp; }
  bool IsCpuLike(const TraceEvent& e) const {
    return legacy_ || cls_.Cat(e) == CatClass::kCpuOp || cls_.Cat(e) == CatClass::kUserAnnotation;
  }
  bool IsCommCpu(const TraceEvent& e) const { return IsCpuLike(e) && cls_.Is(e, kCommCpu); }
  const std::string& Name(const TraceEvent& e) const { return t_.strings[e.name]; }

  void FindSteps() {
    Events cpu;
    std::unordered_map<uint32_t, bool> seen;
    for (const TraceEvent& e : t_.events) {
      if (!cls_.Is(e, kStep)) continue;
      CatClass c = cls_.Cat(e);
      if (c == CatClass::kGpuUserAnnotation) {
        ++out_.gpu_steps;
      } else if (legacy_ || c == CatClass::kUserAnnotation || (c == CatClass::kCpuOp && !cls_.IsOperatorCat(e))) {
        if (!seen.emplace(e.name, true).second) {
          ++out_.duplicate_steps;
          continue;
        }
        cpu.push_back(&e);
      }
    }
    std::sort(cpu.begin(), cpu.end(), [](auto* a, auto* b) { return a->ts != b->ts ? a->ts < b->ts : a->index < b->index; });
    for (size_t k = 1; k < cpu.size(); ++k)
      if (cpu[k]->ts < cpu[k - 1]->end()) ++out_.cpu_step_overlaps;
    if (cpu.empty()) out_.notes.push_back("no ProfilerStep#N on the CPU side: no per-step figures");
    steps_ = StepSpans(std::move(cpu));
  }

  std::vector<CollectiveSource> GpuSteps() {
    FirstByKey launches, cpu_by_ext;
    for (const TraceEvent& e : t_.events) {
      CatClass c = cls_.Cat(e);
      if (c == CatClass::kLaunch && e.correlation) launches.Add(*e.correlation, &e);
      if ((c == CatClass::kCpuOp || c == CatClass::kUserAnnotation) && e.external_id) cpu_by_ext.Add(*e.external_id, &e);
    }
    launches.Seal();
    cpu_by_ext.Seal();
    LinkFigures links;
    links.gpu_events = static_cast<int64_t>(gpu_.size());
    std::vector<const TraceEvent*> launch_of(gpu_.size(), nullptr);
    for (size_t i = 0; i < gpu_.size(); ++i) {
      const TraceEvent& g = *gpu_[i];
      const TraceEvent* l = nullptr;
      if (g.correlation && (l = launches.Find(*g.correlation)) != nullptr) ++links.by_correlation;
      if (l == nullptr) {
        auto f = t_.flows.find(std::make_tuple(g.pid, g.tid, g.ts));
        if (f != t_.flows.end() && (l = launches.Find(f->second)) != nullptr) ++links.by_flow;
      }
      if (l == nullptr && g.external_id && (l = cpu_by_ext.Find(*g.external_id)) != nullptr) ++links.by_external_id;
      if (l == nullptr) ++links.unlinked;
      launch_of[i] = l;
    }
    links.share = static_cast<double>(links.gpu_events - links.unlinked) / static_cast<double>(links.gpu_events);
    bool by_launch = links.share >= 0.5;
    links.method = by_launch ? "launch_in_cpu_span" : "ts_in_cpu_span";
    if (!by_launch) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "only %.1f%% of GPU events link to a launch: GPU events are assigned to a step by their own ts in the step's CPU span", 100 * links.share);
      out_.notes.push_back(buf);
    }
    std::vector<Events> members(steps_.steps().size());
    for (size_t i = 0; i < gpu_.size(); ++i) {
      int k = by_launch ? (launch_of[i] != nullptr ? steps_.Of(launch_of[i]->ts) : -1) : steps_.Of(gpu_[i]->ts);
      if (k < 0) ++links.in_no_step;
      else members[static_cast<size_t>(k)].push_back(gpu_[i]);
    }
    out_.links = links;
    for (size_t k = 0; k < members.size(); ++k) {
      std::vector<Interval> comp, comm, mm, all;
      std::optional<double> w0, w1;
      for (const TraceEvent* e : members[k]) {
        Interval iv{e->ts, e->end()};
        bool kernel = cls_.Cat(*e) == CatClass::kKernel;
        if (kernel && cls_.Is(*e, kCommKernel)) comm.push_back(iv);
        else if (kernel) comp.push_back(iv);
        else mm.push_back(iv);
        all.push_back(iv);
        w0 = w0 ? std::min(*w0, e->ts) : e->ts;
        w1 = w1 ? std::max(*w1, e->end()) : e->end();
      }
      const TraceEvent& s = *steps_.steps()[k];
      StepFigures f = Figures(s, w0, w1, Union(comp), Union(comm), Union(mm), Union(all), Name(s));
      f.gpu_events = static_cast<int64_t>(members[k].size());
      out_.per_step.push_back(std::move(f));
    }
    int64_t overlaps = 0;
    std::optional<double> prev_end;
    for (const StepFigures& f : out_.per_step) {
      if (!f.window_start) continue;
      if (prev_end && *f.window_start < *prev_end) ++overlaps;
      prev_end = f.window_end;
    }
    out_.gpu_window_overlaps = overlaps;
    std::vector<CollectiveSource> coll;
    for (size_t i = 0; i < gpu_.size(); ++i) {
      const TraceEvent& g = *gpu_[i];
      if (cls_.Cat(g) != CatClass::kKernel || !cls_.Is(g, kCommKernel)) continue;
      coll.push_back({&g, KernelKind(g), launch_of[i]});
    }
    return coll;
  }

  std::string KernelKind(const TraceEvent& g) const {
    // The kind in the kernel's name (ncclKernel_AllReduce_…) first, as the oracle; a name
    // that says no kind (RCCL's ncclDevKernel_Generic) yields to the args' collective.
    const std::string& n = Name(g);
    std::string from_name;
    size_t p = n.find("Kernel_");
    if (p != std::string::npos) {
      size_t a = p + 7, b = a;
      while (b < n.size() && std::isalpha(static_cast<unsigned char>(n[b]))) ++b;
      if (b > a) from_name = CanonicalCollectiveKind(n.substr(a, b - a));
    }
    if (!from_name.empty() && IsKnownCollectiveKind(from_name)) return from_name;
    if (g.comm_args >= 0) {
      uint32_t cn = t_.comm_args[static_cast<size_t>(g.comm_args)].collective_name;
      if (cn != 0 && !t_.strings[cn].empty()) return CanonicalCollectiveKind(t_.strings[cn]);
    }
    return from_name.empty() ? "Other" : from_name;
  }

  std::vector<CollectiveSource> CpuSteps() {
    // The training thread: the one holding most steps; without steps, the busiest.
    std::map<std::pair<uint32_t, uint32_t>, double> weight;
    if (!steps_.steps().empty()) {
      for (const TraceEvent* s : steps_.steps()) weight[{s->pid, s->tid}] += 1;
    } else {
      for (const TraceEvent& e : t_.events)
        if (IsCpuOp(e) && !cls_.Is(e, kStep)) weight[{e.pid, e.tid}] += e.dur;
    }
    std::optional<std::pair<uint32_t, uint32_t>> train;
    double best = -1;
    for (const auto& [key, w] : weight)
      if (w > best) { best = w; train = key; }
    Events comm, ops;
    if (train) {
      out_.training_thread = {t_.strings[train->first], t_.strings[train->second]};
      for (const TraceEvent& e : t_.events) {
        if (e.pid == train->first && IsCommCpu(e)) comm.push_back(&e);
        if (e.pid == train->first && e.tid == train->second && IsCpuOp(e) && !cls_.Is(e, kStep)) ops.push_back(&e);
      }
    }
    std::sort(ops.begin(), ops.end(), [](auto* a, auto* b) {
      if (a->ts != b->ts) return a->ts < b->ts;
      if (a->dur != b->dur) return a->dur > b->dur;
      return a->index < b->index;
    });
    Events compute;
    std::optional<double> top_end;
    for (const TraceEvent* e : ops) {
      if (top_end && e->end() <= *top_end) continue;   // enclosed by the current depth-0 op
      top_end = e->end();
      if (!IsCommCpu(*e)) compute.push_back(e);
    }
    for (const TraceEvent* s : steps_.steps()) {
      auto clip = [&](const Events& evs, int64_t& n, int64_t* backend) {
        std::vector<Interval> iv;
        for (const TraceEvent* e : evs) {
          if (e->ts < s->ts || e->ts > s->end()) continue;
          iv.emplace_back(std::max(e->ts, s->ts), std::min(e->end(), s->end()));
          ++n;
          if (backend != nullptr && cls_.Is(*e, kBackendSpan)) ++*backend;
        }
        return Union(std::move(iv));
      };
      int64_t nc = 0, nm = 0, nb = 0;
      IntervalSet comp = clip(compute, nc, nullptr), com = clip(comm, nm, &nb);
      StepFigures f = Figures(*s, s->ts, s->end(), comp, com, {}, Union(comp, com), Name(*s));
      f.compute_ops = nc;
      f.comm_ops = nm;
      f.backend_comm_ops = nb;
      out_.per_step.push_back(std::move(f));
    }
    std::vector<CollectiveSource> coll;
    for (const TraceEvent* e : comm) coll.push_back({e, CanonicalCollectiveKind(Name(*e)), e});
    return coll;
  }

  void StepsWithoutComm() {
    bool gpu = out_.mode == "gpu";
    auto has = [&](const StepFigures& f) { return gpu ? f.comm_us != 0 : f.backend_comm_ops > 0; };
    if (!std::any_of(out_.per_step.begin(), out_.per_step.end(), has)) return;
    for (const StepFigures& f : out_.per_step)
      if (!has(f)) out_.steps_without_comm.push_back(f.name);
  }

  void Steady() {
    std::vector<const StepFigures*> steady;
    for (const StepFigures& f : out_.per_step) steady.push_back(&f);
    SteadyFigures& s = out_.steady;
    if (steady.size() >= 3) {
      steady.erase(steady.begin());
      s.rule = "all steps but the first (warm-up)";
    } else {
      s.rule = "all " + std::to_string(steady.size()) + " step(s): fewer than 3, none dropped";
      if (!steady.empty()) out_.notes.push_back("only " + std::to_string(steady.size()) + " step(s): steady means use all of them");
    }
    std::string empty;
    std::vector<const StepFigures*> kept;
    for (const StepFigures* f : steady) {
      if (f->step_time_us != 0) kept.push_back(f);
      else empty += (empty.empty() ? "" : ", ") + f->name;
    }
    if (!empty.empty()) {
      s.rule += "; empty step(s) left out: " + empty;
      out_.notes.push_back("step(s) with an empty window left out of the steady means: " + empty);
    }
    for (const StepFigures* f : kept) s.steps.push_back(f->name);
    if (kept.empty()) return;
    auto mean = [&](double StepFigures::*m) {
      double sum = 0;
      for (const StepFigures* f : kept) sum += f->*m;
      return sum / static_cast<double>(kept.size());
    };
    s.step_time_us = mean(&StepFigures::step_time_us);
    s.cpu_dur_us = mean(&StepFigures::cpu_dur_us);
    s.compute_us = mean(&StepFigures::compute_us);
    s.comm_us = mean(&StepFigures::comm_us);
    s.exposed_comm_us = mean(&StepFigures::exposed_comm_us);
    s.memcpy_memset_us = mean(&StepFigures::memcpy_memset_us);
    s.memcpy_memset_exposed_us = mean(&StepFigures::memcpy_memset_exposed_us);
    s.idle_us = mean(&StepFigures::idle_us);
    Shares sum;
    int n = 0;
    for (const StepFigures* f : kept) {
      if (!f->shares) continue;
      sum.compute += f->shares->compute;
      sum.comm += f->shares->comm;
      sum.exposed_comm += f->shares->exposed_comm;
      sum.memcpy_memset_exposed += f->shares->memcpy_memset_exposed;
      sum.idle += f->shares->idle;
      ++n;
    }
    if (n > 0)
      s.shares = Shares{sum.compute / n, sum.comm / n, sum.exposed_comm / n, sum.memcpy_memset_exposed / n, sum.idle / n};
  }

  void Top() {
    bool gpu = out_.mode == "gpu";
    out_.top_source = gpu ? "kernels" : "cpu ops and user annotations (inclusive)";
    std::unordered_map<uint32_t, std::pair<int64_t, double>> agg;
    for (const TraceEvent& e : t_.events) {
      bool in = gpu ? cls_.Cat(e) == CatClass::kKernel : IsCpuLike(e) && !cls_.Is(e, kStep);
      if (!in) continue;
      auto& a = agg[e.name];
      ++a.first;
      a.second += e.dur;
    }
    std::vector<std::pair<uint32_t, std::pair<int64_t, double>>> v(agg.begin(), agg.end());
    std::sort(v.begin(), v.end(), [&](const auto& a, const auto& b) {
      if (a.second.second != b.second.second) return a.second.second > b.second.second;
      return t_.strings[a.first] < t_.strings[b.first];
    });
    for (size_t i = 0; i < v.size() && i < 200; ++i) {
      const auto& [id, ct] = v[i];
      out_.ops.push_back({CutUtf8(t_.strings[id], 120), ct.first, ct.second, ct.second / static_cast<double>(ct.first)});
    }
    out_.top.assign(out_.ops.begin(), out_.ops.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(10, out_.ops.size())));
  }

  const TraceFile& t_;
  EventClasses cls_;
  bool legacy_ = false;
  TraceAnalysis out_;
  StepSpans steps_{{}};
  Events gpu_;
};

}  // namespace

TraceAnalysis AnalyseTrace(const TraceFile& trace, const std::string& file_name) {
  return Analyser(trace, file_name).Run();
}

}  // namespace mt::tools::trace
