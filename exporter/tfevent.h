// Decodes the scalar content of a TensorBoard `Event` protobuf (a TFRecord payload)
// without libprotobuf: wall_time (1), step (2) and summary (5) → value (1) → tag (1),
// simple_value (2), or a one-element float/double tensor (8) whose metadata (9) names
// the "scalars" plugin. Everything else (graphs, histograms, images, text) is skipped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mt::exporter {

struct TfEvent {
  double wall_time = 0;  // seconds since the epoch
  int64_t step = 0;
  std::vector<std::pair<std::string, double>> scalars;  // (tag, value)
};

// False if the bytes are not a well-formed Event message.
bool DecodeTfEvent(std::string_view record, TfEvent* out);

// "learning/loss" -> "tb_learning_loss": every character outside [A-Za-z0-9_] becomes '_'.
std::string TbMetricName(std::string_view tag);

}  // namespace mt::exporter
