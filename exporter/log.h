// One-line diagnostics ("[<iso-8601>] [mt-exporter] <message>") to stderr or to the
// --log file. Thread-safe; never throws.
#pragma once

#include <string>
#include <string_view>

namespace mt::exporter {

// Appends to `path` from now on (stderr when empty). Returns false if it cannot be opened.
bool OpenLog(const std::string& path);
void Log(std::string_view message);
// File descriptor plugins' stderr goes to (the log file, or 2).
int LogFd();

}  // namespace mt::exporter
