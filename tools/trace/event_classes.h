// What an event is, from its category and name (the oracle's classes): GPU activity,
// launches, CPU ops, annotations; steps; communication kernels and CPU-side collectives.
// Computed once per distinct string, since a trace repeats a few thousand names.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tools/trace/trace_file.h"

namespace mt::tools::trace {

enum class CatClass : uint8_t {
  kNone, kKernel, kMemcpy, kMemset, kLaunch, kCpuOp, kUserAnnotation, kGpuUserAnnotation, kOther
};

enum NameFlag : uint8_t {
  kStep = 1,             // ProfilerStep#<digits>
  kCommKernel = 2,       // /nccl|rccl/i
  kCommCpu = 4,          // a CPU-side collective name (not aten::*, not a step)
  kBackendSpan = 8,      // ^(gloo|nccl|mpi|ucc):
  kCommRecord = 16,      // ^(nccl|rccl|gloo): or record_param_comms (sizes for rule b)
};

class EventClasses {
 public:
  explicit EventClasses(const TraceFile& trace);
  CatClass Cat(const TraceEvent& e) const { return cat_[e.cat]; }
  bool Is(const TraceEvent& e, NameFlag f) const { return (name_[e.name] & f) != 0; }
  // cat "operator" (older Kineto) is a CPU op, but its ProfilerStep#N is not a step.
  bool IsOperatorCat(const TraceEvent& e) const { return operator_[e.cat] != 0; }
  bool IsGpu(const TraceEvent& e) const {
    CatClass c = Cat(e);
    return c == CatClass::kKernel || c == CatClass::kMemcpy || c == CatClass::kMemset;
  }

 private:
  std::vector<CatClass> cat_;
  std::vector<uint8_t> name_;
  std::vector<uint8_t> operator_;
};

// "ncclKernel_AllReduce_RING_LL_Sum_float" → AllReduce; "gloo:all_reduce" → AllReduce;
// unknown names keep their own capitalised form, else their letters lower-cased.
std::string CanonicalCollectiveKind(std::string_view name);
// One of the kinds CanonicalCollectiveKind knows (AllReduce, …), not a name passed through.
bool IsKnownCollectiveKind(std::string_view kind);
// The first `n` bytes of `s`, shortened to a UTF-8 character boundary.
std::string CutUtf8(const std::string& s, size_t n);
// Bytes of one element of a dtype as profilers spell it ("float", "c10::BFloat16"); 0: unknown.
int DtypeBytes(std::string_view dtype);

}  // namespace mt::tools::trace
