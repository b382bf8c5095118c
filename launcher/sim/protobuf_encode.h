// Appending protobuf wire-format fields to a byte string: what the simulator's TensorBoard
// event files (tfevents_writer.h) and profiler traces (xplane_writer.h) are made of.
// Wire types: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace mt::launch::sim {

void PutVarint(std::string& out, uint64_t v);
void PutTag(std::string& out, int field, int wire_type);
void PutFixed(std::string& out, uint64_t v, int bytes);
void PutDouble(std::string& out, int field, double d);
void PutBytes(std::string& out, int field, std::string_view bytes);
// A varint field (negative int64 values take 10 bytes, as protobuf writes them).
void PutVarintField(std::string& out, int field, uint64_t v);

}  // namespace mt::launch::sim
