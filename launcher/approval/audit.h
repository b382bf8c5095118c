// The approval audit log: append-only JSON lines, one per decision, refusal or submission,
// each fsync'd before the call returns. The gate writes the audit line *before* it acts, so
// a log that cannot be written means nothing is submitted (fail closed).
#pragma once
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace mt::launch::approval {

class AuditLog {
 public:
  explicit AuditLog(std::filesystem::path file) : file_(std::move(file)) {}

  // Adds "time" (ISO-8601 UTC) to `event`, appends it as one line under an exclusive
  // flock (several servers may share the file), fsyncs. kIo / kPermission / kNotFound with
  // what failed.
  base::Status Append(nlohmann::json event) const;

  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path file_;
};

// "2026-11-21T15:53:13Z" for a unix time in seconds.
std::string IsoUtc(int64_t unix_seconds);
int64_t UnixNow();

}  // namespace mt::launch::approval
