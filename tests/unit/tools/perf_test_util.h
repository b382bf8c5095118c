// Synthetic training logs for the perf_analysis / compare_jobs unit tests: the srun -l
// step lines MaxText prints (one per rank), with a header, written into a workspace
// layout (<ws>/<id>-<name>.log and <ws>/<id>-<name>/log). Values are chosen by the test.
#pragma once
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <random>
#include <string>

#include "tests/unit/tools/test_util.h"

namespace mt::tools::testing {

struct SynthStep {
  double seconds = 10, tflops = 800, tgs = 3300, loss = 5;
  double mfu = -1;   // < 0: the log prints no MFU
};

struct SynthLog {
  std::string id = "9001";
  std::string name = "JAX-synthetic-steps_100";
  int ranks = 4;
  int first_step = 0, steps = 100;
  std::string passthrough = "steps=100";
  std::string nodelist = "node[01-04]";
  std::string extra_header;   // lines after the header (e.g. Config params, MFU line)
  std::function<SynthStep(int step)> step = [](int) { return SynthStep{}; };
  std::function<std::string(int step)> after_step;   // extra lines after a step's lines
};

inline std::string RenderSynthLog(const SynthLog& s) {
  std::string o = "JOB_ID=" + s.id + "\nJOB_NAME=" + s.name + "\nNNODES=" + std::to_string(s.ranks) + "\nJOB_NODELIST=" + s.nodelist +
                  "\nPASSTHROUGH_ARGS=\"" + s.passthrough + "\"\nMODEL_NAME=synthetic\n" + s.extra_header;
  char buf[512];
  for (int k = s.first_step; k < s.first_step + s.steps; ++k) {
    SynthStep v = s.step(k);
    for (int r = 0; r < s.ranks; ++r) {
      if (v.mfu >= 0)
        std::snprintf(buf, sizeof buf,
                      "%2d: completed step: %d, seconds: %.3f, TFLOP/s/device: %.3f, MFU: %.2f%%, Tokens/s/device: %.3f, total_weights: 65536, loss: %.3f\n",
                      r, k, v.seconds, v.tflops, v.mfu, v.tgs, v.loss);
      else
        std::snprintf(buf, sizeof buf,
                      "%2d: completed step: %d, seconds: %.3f, TFLOP/s/device: %.3f, Tokens/s/device: %.3f, total_weights: 65536, loss: %.3f\n",
                      r, k, v.seconds, v.tflops, v.tgs, v.loss);
      o += buf;
    }
    if (s.after_step) o += s.after_step(k);
  }
  return o;
}

// Writes the log and the job directory (with its `log` symlink); returns the directory.
inline std::filesystem::path WriteSynthJob(const std::filesystem::path& ws, const SynthLog& s) {
  std::string stem = s.id + "-" + s.name;
  WriteFile(ws / (stem + ".log"), RenderSynthLog(s));
  std::filesystem::create_directories(ws / stem);
  std::error_code ec;
  std::filesystem::create_symlink("../" + stem + ".log", ws / stem / "log", ec);
  return ws / stem;
}

}  // namespace mt::tools::testing
