// Collective operations in an XLA HLO dump (xla_dump/*after_optimizations.txt): how many
// of each kind, how many bytes they move, and how many run asynchronously (a *-start /
// *-done pair lets XLA overlap the transfer with compute; a synchronous collective
// cannot overlap). This is the summary IRLens gives, without Python.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace mt::tools {

struct CollectiveKind {
  uint64_t count = 0;         // instructions (an async pair counts once, at its -start)
  uint64_t async_count = 0;   // of them, issued as *-start
  uint64_t bytes = 0;         // sum of result sizes
  uint64_t max_bytes = 0;
};

struct HloCollectives {
  uint64_t lines = 0;
  uint64_t instructions = 0;                    // lines of the form "%x = shape op(...)"
  std::map<std::string, CollectiveKind> kinds;  // all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute
};

// Bytes of an HLO shape such as "bf16[8192,4096]{1,0}" or a tuple "(f32[2], bf16[4,4])"
// (0 for token[] and unknown element types).
uint64_t HloShapeBytes(std::string_view shape);

// Parses one HLO text; throws std::runtime_error when the file cannot be read.
HloCollectives ScanHloCollectives(const std::filesystem::path& file);
HloCollectives ScanHloCollectivesText(std::string_view text);

}  // namespace mt::tools
