// What differs between two jobs' configurations, from what each job left behind: the log
// header (PASSTHROUGH_ARGS with its `_env_` variables, NNODES, JOB_NODELIST, MODEL_NAME),
// MaxText's "Config param" lines, and the artifact snapshot (git summary, config files).
// Values that only differ by the job's own id or directory name (run_name, output paths)
// are not differences.
#pragma once
#include <string>
#include <vector>

#include "mcp/json.h"
#include "tools/compare/compare_answer.h"
#include "tools/logs/log_scanner.h"
#include "tools/logs/workspace.h"

namespace mt::tools {

struct ConfigDifference {
  std::string key;
  std::string kind;     // passthrough | env | nodes | hosts | model | config | artifact
  std::string a, b;     // "(unset)" when a side does not have it
};

// `a` and `b` are the jobs' scans. Artifact files are read only inside `workspace`.
std::vector<ConfigDifference> DiffConfigs(const Workspace& workspace, const JobFiles& ja, const LogScan& a, const JobFiles& jb,
                                          const LogScan& b);

// "steps=450 _env_NCCL_DEBUG=INFO" → {{"steps","450"},{"_env_NCCL_DEBUG","INFO"}} (a bare
// word maps to "").
std::vector<std::pair<std::string, std::string>> SplitPassthrough(std::string args);

std::vector<ConfigDiffRow> ConfigDiffRows(const std::vector<ConfigDifference>& diffs);

}  // namespace mt::tools
