#include "launcher/approval/audit.h"

#include "base/append_file.h"
#include "base/iso_time.h"

#include <chrono>
#include <ctime>

namespace mt::launch::approval {

std::string IsoUtc(int64_t t) { return base::FormatIso8601(t); }

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

base::Status AuditLog::Append(nlohmann::json event) const {
  if (!event.contains("time")) event["time"] = IsoUtc(UnixNow());
  const std::string line = event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return base::AppendLocked(file_, line, "audit log");
}

}  // namespace mt::launch::approval
