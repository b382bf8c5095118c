// Runs a command in its own process group with a deadline. Used for plugins and
// nvidia-smi, the parts of the exporter that can hang.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

namespace mt::exporter {

struct SubprocessResult {
  bool started = false;      // false: spawn failed, see `error`
  bool timed_out = false;    // the deadline passed; the whole group was SIGKILLed
  int exit_code = -1;        // exit status, or 128+signal when killed by a signal
  std::string output;        // stdout (capped at 16 MiB)
  std::string error;
  double seconds = 0;
};

struct SubprocessOptions {
  std::chrono::milliseconds timeout{10000};
  std::vector<std::string> extra_env;  // "KEY=value", added to (and overriding) environ
  int stderr_fd = 2;                   // where the child's stderr goes
  const std::atomic<bool>* cancel = nullptr;  // checked every few ms; kills the group when set
};

// The run ends when the main process exits (whatever it left behind in its process
// group is then SIGKILLed, so a forked child that never exits cannot hold the pipe open
// and leak) or when the deadline passes (the whole group is SIGKILLed, timed_out=true).
SubprocessResult RunSubprocess(const std::vector<std::string>& argv,
                               const SubprocessOptions& options);

}  // namespace mt::exporter
