// Runs a command in its own process group with a deadline. Used for plugins and
// nvidia-smi, the parts of the exporter that can hang. Everything it keeps from the
// child is bounded: stdout up to `max_output` bytes (plus a short tail), stderr up to
// `max_stderr` bytes when captured.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mt::exporter {

struct SubprocessResult {
  bool started = false;      // false: spawn failed, see `error`
  bool timed_out = false;    // the deadline passed; the whole group was SIGKILLed
  int exit_code = -1;        // exit status, or 128+signal when killed by a signal
  std::string output;        // stdout, the first `max_output` bytes
  uint64_t output_bytes = 0;      // stdout bytes the child wrote in all
  std::string output_tail;        // when stdout was cut: its last bytes (at most `tail_bytes`)
  std::string stderr_text;        // captured stderr (capture_stderr), the first `max_stderr` bytes
  uint64_t stderr_bytes = 0;      // stderr bytes the child wrote in all (capture_stderr)
  size_t escaped_killed = 0;      // kill_escaped: processes that had left the group, killed
  std::string error;
  double seconds = 0;
  bool output_truncated() const { return output_bytes > output.size(); }
  bool stderr_truncated() const { return stderr_bytes > stderr_text.size(); }
};

struct SubprocessOptions {
  std::chrono::milliseconds timeout{10000};
  std::vector<std::string> extra_env;  // "KEY=value", added to (and overriding) environ
  int stderr_fd = 2;                   // where the child's stderr goes (unless capture_stderr)
  bool capture_stderr = false;         // read stderr through a pipe into stderr_text instead
  size_t max_output = 16u << 20;       // stdout bytes kept; the rest is read and dropped
  size_t tail_bytes = 0;               // bytes of the end of a cut stdout kept in output_tail
  size_t max_stderr = 64u << 10;       // stderr bytes kept (capture_stderr); the rest is dropped
  bool kill_escaped = false;           // afterwards, KillEscapedProcesses() (see below)
  const std::atomic<bool>* cancel = nullptr;  // checked every few ms; kills the group when set
};

// The run ends when the main process exits (whatever it left behind in its process
// group is then SIGKILLed, so a forked child that never exits cannot hold the pipe open
// and leak) or when the deadline passes (the whole group is SIGKILLed, timed_out=true).
SubprocessResult RunSubprocess(const std::vector<std::string>& argv,
                               const SubprocessOptions& options);

// Makes this process the "child subreaper" (PR_SET_CHILD_SUBREAPER): a descendant whose
// parent dies is re-parented to this process instead of init, including one that left
// its process group and session with setsid(). Process-wide, idempotent. Children the
// process already has then (started before it exec'd) are never killed by
// KillEscapedProcesses. Returns false if the kernel refused.
bool BecomeChildSubreaper();

// SIGKILLs and reaps every child of this process that RunSubprocess is not running now
// (with a subreaper those are the orphans of plugin runs: setsid'd or double-forked
// leftovers), with the process group it leads, and repeats for their own orphans
// (re-parented here in turn) until none is left and no live process remains in
// `drain_group` (a group just SIGKILLed, whose dying members may still be about to
// orphan something; 0 = none), for at most `budget`. Children RunSubprocess is running
// (a concurrent nvidia-smi) are left alone. Returns how many live processes it killed.
size_t KillEscapedProcesses(pid_t drain_group = 0,
                            std::chrono::milliseconds budget = std::chrono::milliseconds(2000));

// The parent pid in a /proc/<pid>/stat line, or -1 (the comm field may hold spaces and
// parentheses, so it is located from the last ')'). Exposed for tests.
pid_t ParentPidFromStat(const std::string& stat_line);

}  // namespace mt::exporter
