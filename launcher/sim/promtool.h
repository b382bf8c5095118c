// Runs the real `promtool tsdb create-blocks-from openmetrics` to turn OpenMetrics files
// into Prometheus TSDB blocks. No shell is involved: arguments are passed as data.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace mt::launch::sim {

struct PromtoolOptions {
  std::string binary = "promtool";  // looked up on PATH when it has no '/'
  int parallel = 2;                 // concurrent promtool processes
  bool remove_inputs = false;       // delete each input file once its blocks exist
};

// The promtool binary to use: $MT_PROMTOOL if set, else "promtool".
std::string DefaultPromtool();

// Converts OpenMetrics files into blocks under out_dir, running up to opts.parallel promtool
// processes while the caller keeps producing files. Errors quote promtool's own output.
class BlockBuilder {
 public:
  BlockBuilder(std::filesystem::path out_dir, PromtoolOptions opts);
  ~BlockBuilder();  // waits for anything still running
  BlockBuilder(const BlockBuilder&) = delete;
  BlockBuilder& operator=(const BlockBuilder&) = delete;

  // Starts promtool on `file` once a slot is free. Returns the first error so far (kFailed:
  // promtool failed, with its output's tail).
  base::Status Submit(const std::filesystem::path& file);
  // Waits for every submitted file. Returns the first error.
  base::Status Finish();

 private:
  bool ReapOne(bool block);
  std::filesystem::path out_dir_;
  PromtoolOptions opts_;
  std::map<int, std::filesystem::path> running_;  // pid -> file
  base::Status error_;
};

// Convenience: all files at once.
base::Status CreateBlocks(const std::vector<std::filesystem::path>& files, const std::filesystem::path& out_dir,
                          const PromtoolOptions& opts);

}  // namespace mt::launch::sim
