// The /reports/… pages of `mt serve --http`: files that tools wrote under a job's
// <job dir>/mt_report/ (perf_analysis's perf.html), served read-only.
//
//   GET /reports/<job>/<file>     <job>: a job id or directory name (resolved like every
//                                 tool's `job` argument); <file>: a plain file name
//
// Nothing else is reachable: the file must resolve (symlinks included) to a regular file
// directly inside that job's mt_report/ directory; names with '/', '..' or a leading '.'
// are refused. When the server has bearer tokens, the same token as /mcp is required.
// The transport has already checked Host and Origin (DNS rebinding) before the handler.
#pragma once
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mcp/http_transport.h"
#include "mcp/principal.h"

namespace mt::tools {

using ReportAuthenticator = std::function<std::optional<mcp::Principal>(const std::string& token)>;

std::vector<mcp::PageRoute> ReportPageRoutes(const std::filesystem::path& workspace, ReportAuthenticator authenticate);

struct ReportFile {
  int status = 200;                       // 200, 400, 404
  std::filesystem::path path;             // when 200
  std::string content_type;
  std::string error;                      // when not 200
};
// The file a /reports/<job>/<file> request names, or why not (pure, for tests).
ReportFile ResolveReportFile(const std::filesystem::path& workspace, const std::string& job, const std::string& file);

}  // namespace mt::tools
