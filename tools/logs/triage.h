// triage_log's core: from a job's files to the structured answer (class, status,
// evidence with line numbers, progress, hang rule, heartbeat analysis, TGS phases, next
// steps). Pure given the files' bytes, their mtimes and `now`: no clock, no MCP.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "mcp/json.h"
#include "tools/logs/scan_cache.h"
#include "tools/logs/triage_answer.h"
#include "tools/logs/workspace.h"

namespace mt::tools {

struct TriageOptions {
  int64_t now = 0;                                  // seconds since the epoch
  bool full = false;                                // detail: "full"
  std::optional<int64_t> heartbeat_timeout_seconds; // overrides what the log says
};

// Scans the job's logs through `cache` and triages them. Throws std::runtime_error when
// the job has no readable log. How the scan was obtained (`from_cache`, `incremental`)
// is not part of the answer, which depends only on the files and `now`; it goes to
// `scan_meta` when given (the tool returns it as the result's _meta).
TriageAnswer Triage(const JobFiles& job, const TriageOptions& options, ScanCache& cache,
                    Json* scan_meta = nullptr);
// The same, encoded (triage_log's structuredContent), for callers that read it as JSON.
Json TriageJob(const JobFiles& job, const TriageOptions& options, ScanCache& cache,
               Json* scan_meta = nullptr);

// One short human line for the text content ("7877: hang — no completed step for …").
std::string TriageHeadline(const TriageAnswer& triage);

// Whether a triage answer leaves the job possibly still running: running or hung, or of
// unknown status (no usable clock) with no end in the log. A live TSDB may be tried then.
bool MayBeRunning(const Json& triage);

// The options for a `now` (ISO-8601; none = the clock), a detail level and an optional
// heartbeat timeout. Throws std::invalid_argument for a `now` that is not an ISO-8601 time.
TriageOptions MakeTriageOptions(const std::optional<std::string>& now, bool full,
                                std::optional<int64_t> heartbeat_timeout_seconds = std::nullopt);

// triage_log's arguments (job already resolved; `now`, `detail`, heartbeat_timeout_seconds)
// → its structuredContent, for the MCP tool, the CLI and the tools that triage first
// (perf_analysis, compare_jobs, query_tsdb). Throws std::invalid_argument for bad
// arguments, std::runtime_error when the log is unreadable. `scan_meta` receives whether
// the scan came from the cache (see TriageJob).
Json TriageLogStructured(const JobFiles& job, const Json& arguments, Json* scan_meta = nullptr);

}  // namespace mt::tools
