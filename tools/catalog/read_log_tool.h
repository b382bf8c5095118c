// read_log: a bounded window of a job's log — by line range, srun task or regex with
// context — so an agent never needs `cat` on a 2 GB file.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "mcp/registry.h"
#include "mcp/typed.h"
#include "tools/catalog/product_tools.h"
#include "tools/logs/workspace.h"

namespace mt::tools {

struct ReadLogInput {
  std::string job;
  std::optional<std::string> file;
  std::optional<std::string> lines;
  std::optional<int64_t> rank;
  std::optional<std::string> grep;
  std::optional<int64_t> context;
  std::optional<int64_t> max_lines;
  std::string detail = "summary";

  template <class F>
  static void Fields(F& f) {
    f("job", &ReadLogInput::job, {.description = "job id, job directory or log file name", .min_length = 1, .max_length = 1024});
    f("file", &ReadLogInput::file, {.description = "another log inside the job directory", .min_length = 1, .max_length = 1024});
    f("lines", &ReadLogInput::lines, {.max_length = 41, .pattern = "^(-?[0-9]+)?(:[0-9]*)?$"});
    f("rank", &ReadLogInput::rank, {.minimum = 0, .maximum = 1000000});
    f("grep", &ReadLogInput::grep, {.min_length = 1, .max_length = 1000});
    f("context", &ReadLogInput::context, {.minimum = 0, .maximum = 20});
    f("max_lines", &ReadLogInput::max_lines, {.minimum = 1, .maximum = 2000});
    f("detail", &ReadLogInput::detail, {.one_of = {"summary", "full"}, .default_value = "summary"});
  }
};

struct ReadLogLine {
  int64_t line = 0;
  std::string text;
  mcp::Nullable<int64_t> rank;
  bool match = false;

  template <class F>
  static void Fields(F& f) {
    f("line", &ReadLogLine::line, {.minimum = 1});
    f("text", &ReadLogLine::text);
    f("rank", &ReadLogLine::rank);
    f("match", &ReadLogLine::match);
  }
};

struct ReadLogAnswer {
  mcp::Nullable<std::string> job;
  std::string file;
  std::vector<ReadLogLine> lines;
  int64_t returned = 0;
  mcp::Nullable<int64_t> first_line;
  mcp::Nullable<int64_t> last_line;
  mcp::Nullable<int64_t> total_lines;
  int64_t matches = 0;
  bool truncated = false;
  mcp::Nullable<std::string> resume;

  template <class F>
  static void Fields(F& f) {
    f("job", &ReadLogAnswer::job);
    f("file", &ReadLogAnswer::file);
    f("lines", &ReadLogAnswer::lines);
    f("returned", &ReadLogAnswer::returned);
    f("first_line", &ReadLogAnswer::first_line);
    f("last_line", &ReadLogAnswer::last_line);
    f("total_lines", &ReadLogAnswer::total_lines);
    f("matches", &ReadLogAnswer::matches);
    f("truncated", &ReadLogAnswer::truncated);
    f("resume", &ReadLogAnswer::resume);
  }
};

mcp::Tool ReadLogTool(const std::filesystem::path& workspace);
void RegisterReadLog(mcp::Registry& registry, const ProductOptions& options);

// The window of `job`'s log that `input` asks for. `ws` confines `file` to the job
// directory (null for a log given directly on the command line).
ReadLogAnswer ReadLog(const JobFiles& job, const ReadLogInput& input, const Workspace* ws);

}  // namespace mt::tools
