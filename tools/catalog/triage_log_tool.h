// triage_log: why did this job stop (or is it still fine)? The input is a type (its schema
// comes from it); `mt triage` passes the same schema check and calls TriageJob with the same
// options.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "mcp/typed.h"
#include "mcp/registry.h"
#include "tools/catalog/product_tools.h"
#include "tools/logs/triage.h"
#include "tools/logs/workspace.h"

namespace mt::tools {

mcp::Tool TriageLogTool(const std::filesystem::path& workspace);
void RegisterTriageLog(mcp::Registry& registry, const ProductOptions& options);

struct TriageLogInput {
  std::string job;
  std::optional<std::string> now;
  std::string detail = "summary";
  std::optional<int64_t> heartbeat_timeout_seconds;

  template <class F>
  static void Fields(F& f) {
    f("job", &TriageLogInput::job,
      {.description = "job id (7877, local_…, k8s-…), job directory or log file name, relative to the workspace",
       .min_length = 1,
       .max_length = 1024});
    f("now", &TriageLogInput::now,
      {.description = "ISO-8601 time to judge progress and hangs against (default: the server's clock)", .max_length = 40});
    f("detail", &TriageLogInput::detail,
      {.description = "full: up to 50 evidence lines, every next step, init-wave detail",
       .one_of = {"summary", "full"},
       .default_value = "summary"});
    f("heartbeat_timeout_seconds", &TriageLogInput::heartbeat_timeout_seconds,
      {.description = "the job's heartbeat timeout when the log does not state it", .minimum = 1, .maximum = 604800});
  }
};

// The triage options an input asks for; throws std::invalid_argument for a `now` that is not
// an ISO-8601 time.
TriageOptions TriageOptionsFrom(const TriageLogInput& input);
}  // namespace mt::tools
