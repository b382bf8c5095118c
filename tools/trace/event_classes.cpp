#include "tools/trace/event_classes.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace mt::tools::trace {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool IsStepName(std::string_view s) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (!StartsWith(s, kPrefix) || s.size() == kPrefix.size()) return false;
  return std::all_of(s.begin() + kPrefix.size(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

CatClass ClassOf(std::string_view cat) {
  static const std::map<std::string, CatClass, std::less<>> kClasses = {
      {"kernel", CatClass::kKernel},       {"gpu_memcpy", CatClass::kMemcpy},
      {"memcpy", CatClass::kMemcpy},       {"gpu_memset", CatClass::kMemset},
      {"memset", CatClass::kMemset},       {"cuda_runtime", CatClass::kLaunch},
      {"cuda_driver", CatClass::kLaunch},  {"runtime", CatClass::kLaunch},
      {"cpu_op", CatClass::kCpuOp},        {"operator", CatClass::kCpuOp},
      {"user_annotation", CatClass::kUserAnnotation},
      {"gpu_user_annotation", CatClass::kGpuUserAnnotation}};
  auto it = kClasses.find(Lower(cat));
  return it == kClasses.end() ? CatClass::kOther : it->second;
}

uint8_t FlagsOf(std::string_view name) {
  uint8_t f = 0;
  bool step = IsStepName(name);
  if (step) f |= kStep;
  std::string low = Lower(name);
  if (low.find("nccl") != std::string::npos || low.find("rccl") != std::string::npos) f |= kCommKernel;
  static constexpr std::string_view kCpuComm[] = {"gloo", "nccl", "all_reduce", "allreduce", "broadcast",
                                                  "all_gather", "allgather", "reduce_scatter", "barrier",
                                                  "all_to_all", "alltoall", "send", "recv"};
  if (!step && !StartsWith(name, "aten::") &&
      std::any_of(std::begin(kCpuComm), std::end(kCpuComm),
                  [&](std::string_view w) { return low.find(w) != std::string::npos; }))
    f |= kCommCpu;
  for (std::string_view p : {"gloo:", "nccl:", "mpi:", "ucc:"})
    if (StartsWith(name, p)) f |= kBackendSpan;
  for (std::string_view p : {"nccl:", "rccl:", "gloo:"})
    if (StartsWith(name, p)) f |= kCommRecord;
  if (name == "record_param_comms") f |= kCommRecord;
  return f;
}

}  // namespace

EventClasses::EventClasses(const TraceFile& trace)
    : cat_(trace.strings.size()), name_(trace.strings.size()), operator_(trace.strings.size()) {
  for (uint32_t id = 0; id < trace.strings.size(); ++id) {
    operator_[id] = id != 0 && Lower(trace.strings[id]) == "operator";
    cat_[id] = id == 0 ? CatClass::kNone : ClassOf(trace.strings[id]);
    name_[id] = FlagsOf(trace.strings[id]);
  }
}

std::string CanonicalCollectiveKind(std::string_view name) {
  static const std::map<std::string, std::string, std::less<>> kKinds = {
      {"allreduce", "AllReduce"},         {"allgather", "AllGather"},   {"allgatherbase", "AllGather"},
      {"reducescatter", "ReduceScatter"}, {"reducescatterbase", "ReduceScatter"},
      {"broadcast", "Broadcast"},         {"reduce", "Reduce"},         {"barrier", "Barrier"},
      {"alltoall", "AllToAll"},           {"alltoallbase", "AllToAll"}, {"send", "Send"},
      {"recv", "Recv"},                   {"sendrecv", "SendRecv"},
      {"collectivepermute", "CollectivePermute"}, {"collectivebroadcast", "CollectiveBroadcast"}};
  size_t colon = name.rfind(':');
  std::string_view tail = colon == std::string_view::npos ? name : name.substr(colon + 1);
  std::string key;
  for (char c : Lower(tail))
    if (c >= 'a' && c <= 'z') key += c;
  auto it = kKinds.find(key);
  if (it != kKinds.end()) return it->second;
  if (!name.empty() && std::isupper(static_cast<unsigned char>(name[0])) && colon == std::string_view::npos)
    return std::string(name);
  return key.empty() ? "Other" : key;
}

bool IsKnownCollectiveKind(std::string_view kind) {
  for (std::string_view k : {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "Barrier", "AllToAll", "Send",
                             "Recv", "SendRecv", "CollectivePermute", "CollectiveBroadcast"})
    if (kind == k) return true;
  return false;
}

std::string CutUtf8(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  size_t k = n;
  while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
  return s.substr(0, k);
}

int DtypeBytes(std::string_view dtype) {
  static const std::map<std::string, int, std::less<>> kSizes = {
      {"float", 4},   {"float32", 4},        {"double", 8},      {"float64", 8},
      {"half", 2},    {"float16", 2},        {"c10::half", 2},   {"bfloat16", 2},
      {"c10::bfloat16", 2}, {"int", 4},      {"int32", 4},       {"long", 8},
      {"long int", 8}, {"int64", 8},         {"short", 2},       {"int16", 2},
      {"char", 1},    {"signed char", 1},    {"int8", 1},        {"byte", 1},
      {"unsigned char", 1}, {"uint8", 1},    {"bool", 1},        {"complexfloat", 8},
      {"c10::complex<float>", 8}, {"complexdouble", 16}, {"c10::complex<double>", 16}};
  size_t a = dtype.find_first_not_of(" \t\r\n");
  if (a == std::string_view::npos) return 0;
  size_t b = dtype.find_last_not_of(" \t\r\n");
  auto it = kSizes.find(Lower(dtype.substr(a, b - a + 1)));
  return it == kSizes.end() ? 0 : it->second;
}

}  // namespace mt::tools::trace
