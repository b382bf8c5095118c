#include "tools/trace/trace_collectives.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace mt::tools::trace {
namespace {

// Bytes of one collective from an event's args: the message element count × dtype size,
// else the first input's dims product × its type's size; none when neither is usable.
std::optional<int64_t> BytesFromArgs(const TraceFile& t, const TraceEvent& e, const std::string& kind) {
  if (e.comm_args < 0) return std::nullopt;
  const CommArgs& a = t.comm_args[static_cast<size_t>(e.comm_args)];
  int dt = a.dtype != 0 ? DtypeBytes(t.strings[a.dtype]) : 0;
  const std::optional<double>& n = kind == "AllGather" ? a.out_msg_nelems : a.in_msg_nelems;
  // Sizes are file content: a product past what int64 holds is no size (kept in double until checked).
  if (dt > 0 && n && *n > 0 && *n * dt < 9e18) return static_cast<int64_t>(*n) * dt;
  if (a.input_dims0 && !a.input_dims0->empty() && a.input_type0 != 0) {
    int size = DtypeBytes(t.strings[a.input_type0]);
    if (size > 0) {
      double p = 1;
      for (int64_t d : *a.input_dims0) p *= static_cast<double>(d);
      if (std::fabs(p) * size < 9e18) return static_cast<int64_t>(p * size);
    }
  }
  return std::nullopt;
}

std::optional<int64_t> GroupSize(const TraceFile& t, const TraceEvent& e) {
  if (e.comm_args < 0) return std::nullopt;
  return t.comm_args[static_cast<size_t>(e.comm_args)].group_size;
}

// The CPU communication records of one thread, by start, for "which records enclose t".
struct ThreadRecords {
  std::vector<const TraceEvent*> by_ts;
  std::vector<double> max_end;
  std::vector<const TraceEvent*> Enclosing(double t) const {
    std::vector<const TraceEvent*> out;
    size_t hi = static_cast<size_t>(std::upper_bound(by_ts.begin(), by_ts.end(), t,
                                                     [](double v, const TraceEvent* e) { return v < e->ts; }) -
                                    by_ts.begin());
    for (size_t k = hi; k-- > 0;) {
      if (max_end[k] < t) break;   // nothing at or before k reaches t
      if (by_ts[k]->end() >= t) out.push_back(by_ts[k]);
    }
    std::sort(out.begin(), out.end(), [](auto* a, auto* b) { return a->dur != b->dur ? a->dur < b->dur : a->index < b->index; });
    return out;
  }
};

struct Acc {
  CollectiveFigures f;
  std::map<std::string, OpTotal> by_name;
  int64_t backend_n = 0, all_n = 0;
  double backend_us = 0, all_us = 0;
  struct Sized { int64_t bytes; double us; bool backend; };
  std::vector<Sized> sized;
};

std::optional<double> BusFactor(const std::string& kind, int64_t n, std::string& formula) {
  double nn = static_cast<double>(n);
  if (kind == "AllReduce") { formula = "2(n-1)/n x bytes/time"; return 2.0 * (nn - 1) / nn; }
  if (kind == "AllGather" || kind == "ReduceScatter") { formula = "(n-1)/n x bytes/time"; return (nn - 1) / nn; }
  if (kind == "Broadcast" || kind == "Reduce") { formula = "bytes/time"; return 1.0; }
  return std::nullopt;
}

}  // namespace

std::vector<CollectiveFigures> CollectiveFiguresOf(const TraceFile& t, const EventClasses& cls,
                                                   const std::vector<CollectiveSource>& sources, bool gpu_mode,
                                                   std::optional<int64_t> world_size) {
  std::map<std::pair<uint32_t, uint32_t>, ThreadRecords> records;
  if (gpu_mode) {
    for (const TraceEvent& e : t.events) {
      CatClass c = cls.Cat(e);
      if (cls.Is(e, kCommRecord) && (c == CatClass::kCpuOp || c == CatClass::kUserAnnotation))
        records[{e.pid, e.tid}].by_ts.push_back(&e);
    }
    for (auto& [key, r] : records) {
      std::stable_sort(r.by_ts.begin(), r.by_ts.end(), [](auto* a, auto* b) { return a->ts < b->ts; });
      double m = -1e300;
      for (const TraceEvent* e : r.by_ts) r.max_end.push_back(m = std::max(m, e->end()));
    }
  }
  std::map<std::string, Acc> acc;
  for (const CollectiveSource& src : sources) {
    const TraceEvent& e = *src.event;
    Acc& k = acc[src.kind];
    OpTotal& bn = k.by_name[CutUtf8(t.strings[e.name], 120)];
    ++bn.count;
    bn.total_us += e.dur;
    bool backend = !gpu_mode && cls.Is(e, kBackendSpan);
    if (!gpu_mode) {
      if (backend) { ++k.backend_n; k.backend_us += e.dur; }
      else { ++k.all_n; k.all_us += e.dur; }
    }
    std::optional<int64_t> b = BytesFromArgs(t, e, src.kind);
    std::optional<int64_t> n = GroupSize(t, e);
    bool kernel_has_n = e.comm_args >= 0 && t.comm_args[static_cast<size_t>(e.comm_args)].group_size.has_value();
    if (!b && gpu_mode && src.launch != nullptr) {
      auto it = records.find({src.launch->pid, src.launch->tid});
      if (it != records.end()) {
        for (const TraceEvent* c : it->second.Enclosing(src.launch->ts)) {
          b = BytesFromArgs(t, *c, src.kind);
          if (b) {
            if (!kernel_has_n) n = GroupSize(t, *c);
            break;
          }
        }
      }
    }
    if (b) k.sized.push_back({*b, e.dur, backend});
    if (n && *n > 0) k.f.group_size = n;
  }
  std::vector<CollectiveFigures> out;
  for (auto& [kind, k] : acc) {
    CollectiveFigures f = k.f;
    f.kind = kind;
    bool use_backend = k.backend_n > 0;
    for (auto& [name, bn] : k.by_name) {
      bn.name = name;
      bn.mean_us = bn.total_us / static_cast<double>(bn.count);
      f.by_name.push_back(bn);
      if (gpu_mode) {
        f.count += bn.count;
        f.total_us += bn.total_us;
      }
    }
    if (!gpu_mode) {
      f.count = use_backend ? k.backend_n : k.all_n;
      f.total_us = use_backend ? k.backend_us : k.all_us;
      f.counted_from = use_backend ? "backend spans (gloo:/nccl:/mpi:/ucc:)" : "all its ops";
    }
    double bytes = 0;   // summed in double: many huge sizes must not overflow
    for (const Acc::Sized& s : k.sized) {
      if (!gpu_mode && s.backend != use_backend) continue;
      ++f.sized_count;
      bytes += static_cast<double>(s.bytes);
      f.sized_us += s.us;
    }
    f.bytes = bytes < 9e18 ? static_cast<int64_t>(bytes) : int64_t{9'000'000'000'000'000'000};
    if (!f.group_size && world_size) f.group_size = world_size;
    if (f.bytes > 0 && f.sized_us > 0) {
      double alg = static_cast<double>(f.bytes) / f.sized_us / 1e3;
      f.algbw_gbps = alg;
      std::string formula;
      if (f.group_size && *f.group_size > 0) {
        std::optional<double> factor = BusFactor(kind, *f.group_size, formula);
        if (factor) {
          f.busbw_gbps = alg * *factor;
          f.busbw_formula = formula;
        }
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace mt::tools::trace
