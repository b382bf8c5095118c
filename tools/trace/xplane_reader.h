// Reads a JAX/XLA profile (`<host>.xplane.pb`: a serialized tensorflow.profiler.XSpace) by
// walking the protobuf wire format (protobuf_wire.h) from the public field numbers of
// xplane.proto, and turns each device plane (`/device:GPU:<N>`) into a TraceFile that the
// Chrome-trace analyses read unchanged:
//
//  - stream lines' events are GPU activity: kernels, or memcpy / memset by their name;
//    `hlo_op` stats of collectives (all-reduce, all-gather, …) name the collective kind;
//  - derived lines ("XLA Ops", "Framework Name Scope", "Source code", …) are views of the
//    same work and are skipped; the "Steps" line, else the "XLA Modules" line's most
//    time-consuming module, marks the steps (as ProfilerStep#N spans);
//  - times are µs from the plane's earliest line start (XLine.timestamp_ns + offset_ps),
//    so picosecond offsets keep their precision.
//
// Errors (message names the file and the byte offset): kInvalid for any wire fault (a
// varint or a field running past its message, an unknown wire type), kTooLarge past the
// event or byte cap, kNotFound / kIo / kNotRegular for the file itself.
#pragma once
#include <string>
#include <vector>

#include "base/status.h"
#include "tools/trace/trace_file.h"

namespace mt::tools::trace {

struct XPlaneDevice {
  std::string plane;                   // "/device:GPU:3"
  int64_t ordinal = 0;                 // 3
  TraceFile trace;
};

struct XSpaceContents {
  std::vector<XPlaneDevice> devices;   // by ordinal
  std::vector<std::string> hostnames;
  std::vector<std::string> planes;     // every plane's name, host planes included
};

struct XPlaneLimits {
  int64_t max_events = 40'000'000;     // device events, and host launches given to the devices
  uint64_t max_bytes = uint64_t{8} << 30;   // the file is read into memory
};

base::Result<XSpaceContents> ReadXPlane(const std::string& path, const XPlaneLimits& limits = {});

}  // namespace mt::tools::trace
