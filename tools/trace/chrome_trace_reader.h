// Reads a PyTorch / Kineto Chrome-trace file (`*.pt.trace.json`, gzip or not) in one
// streaming pass: a SAX parse (RapidJSON, iterative, so nesting depth cannot exhaust the
// stack) over zlib, keeping only complete events and the few metadata keys the analyses
// use. Memory grows with the number of events, not with the file's bytes.
//
// Two top-level forms are accepted: Kineto's object with "traceEvents" (metadata such as
// distributedInfo may come before or after it), and the bare event array that torch
// writes without Kineto (Debian's torch 1.13). Events that are not objects, and complete
// events whose ts/dur are not numbers or whose dur is negative, are counted, not kept.
//
// Errors (base::Status, message names the file and the byte offset, never file content):
//   kNotFound / kPermission / kIo   the file cannot be opened or read
//   kInvalid                        truncated or corrupt gzip, malformed JSON, a top level
//                                   that is neither form, "traceEvents" that is not an array
//   kTooLarge                       over a ReadLimits cap (events, distinct strings, bytes)
#pragma once
#include <cstdint>
#include <string>

#include "base/status.h"
#include "tools/trace/trace_file.h"

namespace mt::tools::trace {

// What a file may cost, whatever it holds (a gzip "bomb" inflates ~1000:1): past a limit the
// read stops with kTooLarge (kInvalid for nesting).
struct ReadLimits {
  int64_t max_events = 40'000'000;       // complete + flow events kept; a 1 GiB trace has ~5 M
  int64_t max_strings = 8'000'000;       // distinct names, categories, thread keys
  uint64_t max_bytes = uint64_t{64} << 30;   // JSON bytes read (after inflating)
  int max_depth = 1000;                  // nesting of arrays and objects (real traces: < 10)
};

base::Result<TraceFile> ReadChromeTrace(const std::string& path, const ReadLimits& limits = {});

}  // namespace mt::tools::trace
