// list_jobs: what jobs does this workspace hold, and how did each end? A quick look at
// each log's head and tail (not a full scan), so it stays fast on workspaces of
// multi-GB logs; triage_log gives the exact answer for one job.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "mcp/registry.h"
#include "mcp/typed.h"
#include "tools/catalog/product_tools.h"

namespace mt::tools {

inline const std::vector<std::string> kQuickStatuses = {"completed", "failed",  "cancelled", "running",
                                                        "unknown",   "pending", "unreadable"};

struct ListJobsInput {
  std::optional<std::string> status;
  std::optional<int64_t> limit;
  std::optional<std::string> now;
  std::string detail = "summary";

  template <class F>
  static void Fields(F& f) {
    f("status", &ListJobsInput::status, {.description = "only jobs with this quick status", .one_of = kQuickStatuses});
    f("limit", &ListJobsInput::limit,
      {.description = "jobs returned at most (default 40, newest first)", .minimum = 1, .maximum = 500});
    f("now", &ListJobsInput::now,
      {.description = "ISO-8601 time for the running/unknown decision (default: now)", .max_length = 40});
    f("detail", &ListJobsInput::detail, {.one_of = {"summary", "full"}, .default_value = "summary"});
  }
};

struct ListedJob {
  mcp::Nullable<std::string> id;
  std::string name;
  std::string kind;
  mcp::Nullable<std::string> log;
  mcp::Nullable<std::string> dir;
  bool has_tsdb = false;
  mcp::Nullable<std::string> model;
  mcp::Nullable<int64_t> nodes;
  std::string status = "unknown";
  mcp::Nullable<int64_t> last_step;
  mcp::Nullable<std::string> start_time;
  mcp::Nullable<std::string> end_time;
  mcp::Nullable<std::string> last_write;
  std::optional<int64_t> rank_logs;         // detail=full
  std::optional<int64_t> ray_worker_logs;   // detail=full

  template <class F>
  static void Fields(F& f) {
    f("id", &ListedJob::id);
    f("name", &ListedJob::name);
    f("kind", &ListedJob::kind, {.one_of = {"slurm", "local", "k8s", "unknown"}});
    f("log", &ListedJob::log);
    f("dir", &ListedJob::dir);
    f("has_tsdb", &ListedJob::has_tsdb);
    f("model", &ListedJob::model);
    f("nodes", &ListedJob::nodes);
    f("status", &ListedJob::status, {.one_of = kQuickStatuses});
    f("last_step", &ListedJob::last_step);
    f("start_time", &ListedJob::start_time);
    f("end_time", &ListedJob::end_time);
    f("last_write", &ListedJob::last_write);
    f("rank_logs", &ListedJob::rank_logs);
    f("ray_worker_logs", &ListedJob::ray_worker_logs);
  }
};

struct ListJobsAnswer {
  std::string workspace;
  std::string now;
  int64_t total = 0;
  std::vector<ListedJob> jobs;
  bool truncated = false;
  mcp::Nullable<std::string> omitted;
  std::vector<std::string> warnings;

  template <class F>
  static void Fields(F& f) {
    f("workspace", &ListJobsAnswer::workspace);
    f("now", &ListJobsAnswer::now);
    f("total", &ListJobsAnswer::total);
    f("jobs", &ListJobsAnswer::jobs);
    f("truncated", &ListJobsAnswer::truncated);
    f("omitted", &ListJobsAnswer::omitted);
    f("warnings", &ListJobsAnswer::warnings);
  }
};

mcp::Tool ListJobsTool(const std::filesystem::path& workspace);
void RegisterListJobs(mcp::Registry& registry, const ProductOptions& options);

// The jobs of `workspace` that `input` asks for. Throws WorkspaceError / std::invalid_argument.
ListJobsAnswer ListJobs(const std::filesystem::path& workspace, const ListJobsInput& input);

}  // namespace mt::tools
