// Runs the real `promtool tsdb create-blocks-from openmetrics` to turn OpenMetrics files
// into Prometheus TSDB blocks. No shell is involved: arguments are passed as data.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace mt::launch::sim {

struct PromtoolOptions {
  std::string binary = "promtool";  // looked up on PATH when it has no '/'
  int parallel = 2;                 // concurrent promtool processes
};

// The promtool binary to use: $MT_PROMTOOL if set, else "promtool".
std::string DefaultPromtool();

// Converts every file into blocks under out_dir. Returns "" or an error that quotes
// promtool's own output.
std::string CreateBlocks(const std::vector<std::filesystem::path>& files, const std::filesystem::path& out_dir,
                         const PromtoolOptions& opts);

}  // namespace mt::launch::sim
