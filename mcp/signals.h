// Graceful shutdown on SIGINT/SIGTERM for long-running servers: the signals are blocked
// in every thread and a dedicated thread waits for them and runs `stop` once. Call it
// before starting any other thread. SIGPIPE is ignored (a peer closing a socket or pipe
// mid-write must surface as a write error, not kill the process).
#pragma once
#include <functional>

namespace mt::mcp {

void StopOnSignals(std::function<void()> stop);

}  // namespace mt::mcp
