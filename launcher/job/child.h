// Child processes of mt-job: started without a shell, optionally in their own process group,
// with stdout/stderr redirected, and tied to their parent's life (PR_SET_PDEATHSIG) so an
// observer never outlives a task that was SIGKILLed.
#pragma once
#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace mt::launch::job {

struct SpawnOptions {
  bool own_group = false;              // setpgid(0, 0)
  bool die_with_parent = false;        // SIGTERM when the parent dies
  int stdout_fd = -1, stderr_fd = -1;  // -1: inherit
  std::map<std::string, std::string> env;   // set on top of the inherited environment
};

// Returns the pid, or -1 with *error set (exec failures are reported, not just fork's).
pid_t Spawn(const std::vector<std::string>& argv, const SpawnOptions& o, std::string* error);

// waitpid → exit code (128+N for a signal); -1 if not a child.
int WaitExit(pid_t pid);

// SIGTERM (to the group when own_group), wait up to grace_s, then SIGKILL. Returns the exit code.
int Stop(pid_t pid, bool group, double grace_s);

// Non-blocking: true and *code set when pid has exited.
bool Reap(pid_t pid, int* code);

// Sets handlers for SIGTERM/SIGINT that record the signal (read with PendingSignal()).
void InstallTermHandlers();
int PendingSignal();

}  // namespace mt::launch::job
