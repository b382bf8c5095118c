// Training-progress lines of the frameworks people train LLMs with, as data: each format
// is a literal (the scanner's prefilter) and patterns for the fields it carries. The
// scanner reads MaxText's `completed step:` on its own fast path; every other framework
// goes through this table, so supporting one more is one more row, not a branch.
//
// One log, one format: the first format that yields a step owns the log's steps, so a
// framework that prints two counters (a step line and a progress bar) or an excerpt
// quoted inside another job's log cannot mix two step series.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace mt::tools {

struct ProgressFields {
  int64_t step = 0;
  int64_t total = -1;       // the run's configured step count when the line states it
  double seconds = -1;      // time of this step
  double tflops = -1;       // per device
  double mfu = -1;          // percent
  double tgs = -1;          // tokens per second per device
  double loss = -1;
};

struct ProgressFormat {
  std::string_view name;          // megatron, torchtitan, deepspeed, lightning, levanter, hf_trainer, step_loss
  std::string_view literal;       // prefilter: a line without it is never this format
  bool last_occurrence;           // progress bars rewrite one line with '\r': read the last update
  const char* step;               // RE2, group 1 = step, optional group 2 = total
  const char* seconds = nullptr;  // group 1, times seconds_scale
  double seconds_scale = 1;
  const char* tflops = nullptr;
  const char* mfu = nullptr;
  const char* tgs = nullptr;
  const char* loss = nullptr;
};

const std::vector<ProgressFormat>& ProgressFormats();

// Reads `line` as a progress line of any format in the table; `format` gets its index.
bool ParseProgressLine(std::string_view line, ProgressFields* out, int* format);

}  // namespace mt::tools
