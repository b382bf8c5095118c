// /reports/<job>/<file>: only regular files directly inside a job's mt_report/.
#include "tools/catalog/report_routes.h"

#include <gtest/gtest.h>

#include "tests/unit/tools/perf_test_util.h"

namespace mt::tools {
namespace {

using testing::TempDir;

TEST(ReportRoutes, ServesOnlyFilesInsideMtReport) {
  TempDir t;
  auto dir = testing::WriteSynthJob(t.path(), testing::SynthLog{});
  testing::WriteFile(dir / "mt_report/perf.html", "<html></html>");
  testing::WriteFile(dir / "secret.txt", "no");

  ReportFile ok = ResolveReportFile(t.path(), "9001", "perf.html");
  ASSERT_EQ(ok.status, 200) << ok.error;
  EXPECT_EQ(ok.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(ok.path, std::filesystem::canonical(dir / "mt_report/perf.html"));
  // By directory name too.
  EXPECT_EQ(ResolveReportFile(t.path(), dir.filename().string(), "perf.html").status, 200);

  EXPECT_EQ(ResolveReportFile(t.path(), "9001", "missing.html").status, 404);
  EXPECT_EQ(ResolveReportFile(t.path(), "9999", "perf.html").status, 404);
  EXPECT_EQ(ResolveReportFile(t.path(), "9001", "..").status, 400);
  EXPECT_EQ(ResolveReportFile(t.path(), "9001", "../secret.txt").status, 400);
  EXPECT_EQ(ResolveReportFile(t.path(), "9001", ".hidden").status, 400);
  EXPECT_EQ(ResolveReportFile(t.path(), "..", "perf.html").status, 400);
  EXPECT_EQ(ResolveReportFile(t.path(), "/etc", "passwd").status, 400);
  EXPECT_EQ(ResolveReportFile(t.path(), "9001", "a%2Fb").status, 400);

  // A symlink inside mt_report that leads elsewhere (in or out of the workspace) is refused.
  std::filesystem::create_symlink(dir / "secret.txt", dir / "mt_report/link.html");
  EXPECT_EQ(ResolveReportFile(t.path(), "9001", "link.html").status, 404);
  std::filesystem::create_symlink("/etc/passwd", dir / "mt_report/passwd.html");
  EXPECT_NE(ResolveReportFile(t.path(), "9001", "passwd.html").status, 200);
}

TEST(ReportRoutes, RouteIsDeclared) {
  auto routes = ReportPageRoutes("/nonexistent", nullptr);
  ASSERT_EQ(routes.size(), 1u);
  EXPECT_EQ(routes[0].method, "GET");
  EXPECT_EQ(routes[0].pattern, "/reports/([^/]+)/([^/]+)");
}

}  // namespace
}  // namespace mt::tools
