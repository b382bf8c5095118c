#include "tools/catalog/report_routes.h"

#include "base/workspace_files.h"

#include <httplib.h>

#include <fstream>
#include <sstream>
#include <system_error>

#include "tools/logs/workspace.h"

namespace mt::tools {
namespace {

constexpr uint64_t kMaxReportBytes = 64u << 20;

bool PlainName(const std::string& s) {
  if (s.empty() || s.size() > 255 || s[0] == '.') return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return false;
  return s.find("..") == std::string::npos;
}

std::string TypeOf(const std::string& name) {
  auto ends = [&](const char* x) {
    std::string e(x);
    return name.size() >= e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".json")) return "application/json";
  if (ends(".csv")) return "text/csv; charset=utf-8";
  return "text/plain; charset=utf-8";
}

void SendError(httplib::Response& res, int status, const std::string& msg) {
  res.status = status;
  res.set_content(msg + "\n", "text/plain; charset=utf-8");
}

}  // namespace

ReportFile ResolveReportFile(const std::filesystem::path& workspace, const std::string& job, const std::string& file) {
  ReportFile r;
  auto fail = [&](int status, std::string msg) {
    r.status = status;
    r.error = std::move(msg);
    return r;
  };
  if (!PlainName(file)) return fail(400, "bad report file name '" + file.substr(0, 80) + "'");
  if (job.empty() || job.size() > 255 || job.find('/') != std::string::npos || job.find("..") != std::string::npos || job[0] == '.')
    return fail(400, "bad job name '" + job.substr(0, 80) + "'");
  try {
    Workspace ws(workspace);
    JobFiles j = ws.Resolve(job);
    if (j.dir.empty()) return fail(404, "job " + job + " has no job directory");
    std::error_code ec;
    std::filesystem::path dir = ws.Confine(j.dir / "mt_report");
    std::filesystem::path p = ws.Confine(dir / file);
    // Only files directly inside this job's mt_report/ (a symlink elsewhere is refused).
    if (p.parent_path() != dir || !std::filesystem::is_regular_file(p, ec)) return fail(404, "no report " + file + " for job " + job);
    if (std::filesystem::file_size(p, ec) > kMaxReportBytes) return fail(404, "report " + file + " is too large to serve");
    r.path = p;
    r.content_type = TypeOf(file);
    return r;
  } catch (const WorkspaceError& e) {
    return fail(e.code() == WorkspaceError::Code::kEscapes ? 400 : 404, e.what());
  } catch (const std::exception& e) {
    return fail(404, e.what());
  }
}

std::vector<mcp::PageRoute> ReportPageRoutes(const std::filesystem::path& workspace, ReportAuthenticator authenticate) {
  mcp::PageRoute get;
  get.method = "GET";
  get.pattern = "/reports/([^/]+)/([^/]+)";
  get.handler = [workspace, authenticate](const httplib::Request& req, httplib::Response& res) {
    if (authenticate) {
      std::string auth = req.get_header_value("Authorization");
      bool ok = auth.size() > 7 && (auth.compare(0, 7, "Bearer ") == 0 || auth.compare(0, 7, "bearer ") == 0) &&
                authenticate(auth.substr(7)).has_value();
      if (!ok) {
        res.set_header("WWW-Authenticate", "Bearer realm=\"mt\"");
        SendError(res, 401, "unauthorized: a valid bearer token is required");
        return;
      }
    }
    ReportFile f = ResolveReportFile(workspace, req.matches[1].str(), req.matches[2].str());
    if (f.status != 200) {
      SendError(res, f.status, f.error);
      return;
    }
    // Read through the confined layer: a FIFO or device swapped in after the checks above
    // must not block this worker, nor a file grown since be read without bound.
    auto root = base::FileRoot::Make(workspace);
    auto body = root.ok() ? base::ReadSmallFile(*root, f.path, kMaxReportBytes) : base::Result<std::string>(root.status());
    if (!body.ok()) {
      SendError(res, 404, "cannot read the report: " + body.message());
      return;
    }
    res.status = 200;
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:");
    res.set_header("Cache-Control", "no-cache");
    res.set_content(*body, f.content_type);
  };
  return {get};
}

}  // namespace mt::tools
