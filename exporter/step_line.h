// MaxText's per-step log line, with or without the MFU patch and a Slurm rank prefix:
//   " 0: completed step: 12, seconds: 5.667, TFLOP/s/device: 934.2, MFU: 37.37%,
//        Tokens/s/device: 3290.1, total_weights: 65536, loss: 7.123"
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace mt::exporter {

struct StepLine {
  int rank = -1;  // Slurm task label (`srun -l`), -1 when the line has none
  int64_t step = 0;
  double seconds = 0;
  std::optional<double> tokens_per_sec;  // Tokens/s/device
  std::optional<double> loss;
};

std::optional<StepLine> ParseStepLine(std::string_view line);

}  // namespace mt::exporter
