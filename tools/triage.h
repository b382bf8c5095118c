// triage_log's core: from a job's files to the structured answer (class, status,
// evidence with line numbers, progress, hang rule, heartbeat analysis, TGS phases, next
// steps). Pure given the files' bytes, their mtimes and `now`: no clock, no MCP.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "mcp/json.h"
#include "tools/scan_cache.h"
#include "tools/workspace.h"

namespace mt::tools {

struct TriageOptions {
  int64_t now = 0;                                  // seconds since the epoch
  bool full = false;                                // detail: "full"
  std::optional<int64_t> heartbeat_timeout_seconds; // overrides what the log says
};

// The exact class names triage_log can return (the outputSchema enum).
const std::vector<std::string>& TriageClasses();

// Scans the job's logs through `cache` and triages them. Throws std::runtime_error when
// the job has no readable log.
Json TriageJob(const JobFiles& job, const TriageOptions& options, ScanCache& cache);

// One short human line for the text content ("7877: hang — no completed step for …").
std::string TriageHeadline(const Json& triage);

}  // namespace mt::tools
