// The GPU peak table (configs/gpu_peaks.yaml): dense peak TFLOP/s by GPU and data type,
// used to compute MFU from a log's TFLOP/s/device when the log has no MFU.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace mt::tools {

struct GpuPeaks {
  std::map<std::string, std::map<std::string, double>> table;   // GPU (upper case) → dtype → TFLOP/s
  std::string source;                                            // the file read, or "built-in"

  // Peak for a GPU and dtype ("bf16" when the dtype has no entry); nullopt when unknown.
  std::optional<double> Find(const std::string& gpu, const std::string& dtype) const;
};

// Reads `file` when given; else $MT_GPU_PEAKS; else configs/gpu_peaks.yaml under the
// current directory or beside the executable's source tree; else the built-in copy of
// that file. Throws std::runtime_error for an unreadable or malformed file that was named.
GpuPeaks LoadGpuPeaks(const std::filesystem::path& file = {});

}  // namespace mt::tools
