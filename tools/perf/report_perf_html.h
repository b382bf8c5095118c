// perf_analysis's HTML report: one self-contained page (inline CSS and SVG, no script,
// no external reference of any kind) with TGS per step and its phases, the step-time
// histogram and the loss curve, plus the numbers of the structured answer. Written to
// <job dir>/mt_report/perf.html through a temp file and a rename, so a reader never sees
// half a page; `mt serve --http` serves it under /reports/<job dir>/perf.html.
#pragma once
#include <filesystem>
#include <string>

#include "mcp/json.h"
#include "tools/logs/log_scanner.h"
#include "tools/logs/workspace.h"

namespace mt::tools {

// The page for a perf_analysis answer and the scan it came from.
std::string RenderPerfHtml(const Json& perf, const LogScan& scan);

// Renders and writes the page; returns its path. Throws std::runtime_error when the
// directory cannot be created or written.
std::filesystem::path WritePerfReportHtml(const JobFiles& job, const Json& perf, const LogScan& scan);


}  // namespace mt::tools
