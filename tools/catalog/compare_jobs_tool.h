// compare_jobs: why is B slower (or faster) than A, in one call. Input and answer are types
// (the answer: tools/compare/compare_answer.h); the CLI (`mt compare`) calls
// CompareJobsStructured.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "mcp/typed.h"
#include <filesystem>

#include "mcp/registry.h"
#include "tools/compare/compare_jobs.h"
#include "tools/catalog/product_tools.h"
#include "tools/tsdb/tsdb_manager.h"

namespace mt::tools {

struct CompareJobsInput {
  std::vector<std::string> jobs;
  int64_t warmup_steps = 5;
  bool tsdb = true;
  std::optional<std::string> now;
  std::string detail = "summary";
  std::optional<std::string> source;

  template <class F>
  static void Fields(F& f) {
    f("jobs", &CompareJobsInput::jobs,
      {.description = "job ids, directories or log names: A (baseline), B, [C…]",
       .schema = Json{{"items", {{"type", "string"}, {"minLength", 1}, {"maxLength", 1024}}}},
       .min_items = 2,
       .max_items = 8});
    f("warmup_steps", &CompareJobsInput::warmup_steps, {.minimum = 0, .maximum = 100000, .default_value = 5});
    f("tsdb", &CompareJobsInput::tsdb, {.description = "false: compare the logs only", .default_value = true});
    f("now", &CompareJobsInput::now,
      {.description = "ISO-8601 'now' for triage (default: the end of each job's TSDB data, else the clock)", .max_length = 40});
    f("detail", &CompareJobsInput::detail,
      {.description = "full: more metrics rows, up to 20,000 tokens", .one_of = {"summary", "full"}, .default_value = "summary"});
    f("source", &CompareJobsInput::source,
      {.description = "a metrics source configured in mt.yaml (metrics.sources) holding both jobs' hosts, instead of "
                      "their own TSDBs: each job is placed on it by its log and the scheduler",
       .min_length = 1, .max_length = 128});
  }
};

mcp::Tool CompareJobsTool(const std::filesystem::path& workspace, TsdbManager& manager, std::vector<MetricsSource> sources = {});
// Registers compare_jobs on the process-wide DefaultTsdbManager().
void RegisterCompareJobs(mcp::Registry& registry, const ProductOptions& options);

// The comparison an input asks for.
CompareAnswer CompareFor(const std::filesystem::path& workspace, const CompareJobsInput& input, TsdbManager& manager,
                         const std::vector<MetricsSource>& sources, mcp::CallContext* call);
// Bounds the encoded answer to the input's budget and returns the text block.
std::string BoundCompareAnswer(const CompareJobsInput& input, Json& encoded);
// The comparison an input asks for → structuredContent, bounded to 2,000 tokens
// (20,000 with detail: full). `call` may be null.
Json CompareJobsStructured(const std::filesystem::path& workspace, const CompareJobsInput& input, TsdbManager& manager,
                           const std::vector<MetricsSource>& sources, mcp::CallContext* call);

}  // namespace mt::tools
