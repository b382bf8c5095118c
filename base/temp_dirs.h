// A process-wide registry of temporary directories (and the child process working in
// each) that must not outlive the process, whatever way it ends.
//
// Why: query_tsdb copies a job's TSDB into $TMPDIR/mt-tsdb-*/ and runs Prometheus on the
// copy. Destructors only run on a normal return; a SIGTERM to `mt query`, or `mt serve`
// ending on a signal with _Exit, left the copies behind (hardening issue #14). Here:
//
//  - RemoveRegisteredTempDirs() stops each registered child (SIGTERM, then SIGKILL after
//    2 s) and removes each directory. It is async-signal-safe (no locks, no allocation:
//    fixed slots, openat/getdents64/unlinkat), so a signal handler or a signal-waiting
//    thread may call it at any moment, even while another thread is mid-registration or
//    mid-copy; each directory is removed once.
//  - The first registration installs an atexit handler that calls it.
//  - InstallTempDirSignalCleanup() adds handlers for SIGINT, SIGTERM, SIGHUP and SIGQUIT
//    that call it and then die of the same signal (exit status unchanged), for the
//    signals whose disposition is still the default. A process that blocks those signals
//    and sigwait()s for them (mt serve, mcp/signals.h) never runs these handlers: it must
//    call RemoveRegisteredTempDirs() itself on its shutdown path.
//
// At most kMaxTempDirs directories are registered at once; Register returns -1 past that
// (the caller then cleans up only through its own destructors). Paths longer than
// PATH_MAX are refused the same way.
#pragma once
#include <sys/types.h>

#include <filesystem>

namespace mt::base {

inline constexpr int kMaxTempDirs = 256;

// Registers `dir` (absolute). Returns a slot id, or -1.
int RegisterTempDir(const std::filesystem::path& dir);
// The child process working in the slot's directory (stopped before it is removed).
void SetTempDirChild(int slot, pid_t pid);
// Forgets the slot without touching the directory (the owner removed it itself).
void ForgetTempDir(int slot);
// Stops the children and removes every registered directory; async-signal-safe.
void RemoveRegisteredTempDirs() noexcept;
// Directories currently registered (tests).
int RegisteredTempDirs();
// See above. Idempotent.
void InstallTempDirSignalCleanup();

// Removes the tree at `dir` without following symlinks (async-signal-safe; bounded depth
// 32). Returns true when `dir` no longer exists.
bool RemoveTreeNoFollow(const char* dir) noexcept;

}  // namespace mt::base
