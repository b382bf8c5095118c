// One-line diagnostics ("[<iso-8601>] [mt-exporter] <message>") to stderr or to the
// --log file. Thread-safe; never throws. A --log file is bounded: once it would grow
// past `max_bytes`, it is renamed to FILE.1 (replacing the previous one) and a new FILE
// starts with a marker line, so the two never hold more than about 2 × max_bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mt::exporter {

// Appends to `path` from now on (to stderr again when empty). Returns false if it cannot
// be opened. max_bytes = 0: never rotated.
bool OpenLog(const std::string& path, uint64_t max_bytes = 0);
void Log(std::string_view message);
// File descriptor children's stderr goes to (the log file, or 2). It stays the same
// number across rotations.
int LogFd();

// A child's captured stderr as log messages: "<source>: stderr: <line>" per line, and,
// when `total_bytes` (what the child wrote) exceeds what `text` holds, a last one
// "<source>: stderr: [N more bytes dropped; <why>]".
std::vector<std::string> StderrLogLines(std::string_view source, std::string_view text, uint64_t total_bytes,
                                        std::string_view why);

}  // namespace mt::exporter
