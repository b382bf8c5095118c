// Appending whole lines to a log file that several processes write (the audit log, the
// node ledger): one write under an exclusive flock, then fsync, so concurrent writers
// never interleave and a line that was reported written survives a crash.
#pragma once
#include <filesystem>
#include <string>

#include "base/status.h"

namespace mt::base {

// Appends `text` (whole lines, each ending in '\n') to `file`, creating it (mode 0600) and
// its parent directories. `what` names the file in errors ("audit log").
Status AppendLocked(const std::filesystem::path& file, const std::string& text, const std::string& what);

}  // namespace mt::base
