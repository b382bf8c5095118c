// Writing a tensorflow.profiler.XSpace (`<host>.xplane.pb`) in the protobuf wire format,
// from the public field numbers of xplane.proto, as jax.profiler leaves it: planes
// (`/host:CPU`, `/device:GPU:<N>`) of lines (`Stream #<id>`, `Host Threads/<tid>`) of
// events, with event and stat metadata interned per plane and string stats stored as
// references (ref_value), as the TSL profiler does.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace mt::launch::sim {

struct XStatValue {
  std::string name;
  std::variant<int64_t, uint64_t, std::string> value;   // a string is written as a ref_value
};

struct XEventSpec {
  std::string name;
  int64_t offset_ps = 0, duration_ps = 0;
  std::vector<XStatValue> stats;
};

struct XLineSpec {
  int64_t id = 0;
  std::string name;
  int64_t timestamp_ns = 0;
  std::vector<XEventSpec> events;
};

struct XPlaneSpec {
  int64_t id = 0;
  std::string name;
  std::vector<XLineSpec> lines;
  std::vector<XStatValue> stats;      // plane-level (e.g. device_vendor)
};

// The serialized XSpace.
std::string EncodeXSpace(const std::vector<XPlaneSpec>& planes, const std::vector<std::string>& hostnames);

}  // namespace mt::launch::sim
