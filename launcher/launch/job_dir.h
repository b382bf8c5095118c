// What every backend leaves in the workspace for one job (reference §2.3): <id>-<name>/
// with `artifact` and `log` links and .mt-launch.json (the launch record: backend, job id,
// plan hash, and what the backend needs to find the job again), and the JOB SUMMARY that
// mt-job writes at the end of the log.
#pragma once
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "launcher/launch/plan.h"

namespace mt::launch {

// The launch record of a plan submitted as job `id`.
nlohmann::json LaunchRecordJson(const Plan& p, const std::string& id);

// <ws>/<id>-<name>/ with its links and launch record, built beside and renamed in;
// kConflict when it exists already, else the file-system error.
base::Status CreateJobDir(const Plan& p, const std::string& id, const nlohmann::json& record, std::filesystem::path* dir);

// Rewrites the record (best effort: the job runs already; a record without its pgid only
// makes status and cancel see it as ended).
void WriteLaunchRecord(const std::filesystem::path& dir, const nlohmann::json& record);

// JOB SUMMARY status from the log's tail: COMPLETED / FAILED / CANCELLED with the exit code.
bool SummaryFromLog(const std::filesystem::path& log, std::string* state, int* exit_code);

// A command's output without the white space around it (scheduler states, job ids, errors).
std::string TrimOutput(const std::string& s);

}  // namespace mt::launch
