#include "base/temp_dirs.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace mt::base {
namespace {

// 0 free, 1 being filled, 2 registered, 3 being removed.
struct Slot {
  std::atomic<int> state{0};
  std::atomic<pid_t> child{0};
  char path[PATH_MAX];
};
Slot g_slots[kMaxTempDirs];
std::atomic<bool> g_atexit_installed{false};
std::atomic<bool> g_signals_installed{false};

void AtExit() { RemoveRegisteredTempDirs(); }

void SleepMs(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// Stops `pid` (our child): SIGTERM, up to 2 s, then SIGKILL. Reaps it.
void StopChild(pid_t pid) {
  if (pid <= 0) return;
  if (::kill(pid, SIGTERM) != 0) return;
  for (int i = 0; i < 100; ++i) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || r < 0) return;   // exited, or not (any more) our child
    SleepMs(20);
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

struct Dirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

// Removes what `dfd` holds; returns whether anything was removed in the last pass.
void RemoveContents(int dfd, int depth) {
  if (depth > 32) return;
  alignas(8) char buf[2048];
  for (int pass = 0; pass < 16; ++pass) {
    if (::lseek(dfd, 0, SEEK_SET) < 0) return;
    bool removed = false, any = false;
    for (;;) {
      long n = ::syscall(SYS_getdents64, dfd, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        auto* d = reinterpret_cast<Dirent64*>(buf + off);
        off += d->d_reclen;
        const char* name = d->d_name;
        if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
        any = true;
        bool dir = d->d_type == DT_DIR;
        if (!dir) {
          if (::unlinkat(dfd, name, 0) == 0) {
            removed = true;
            continue;
          }
          if (errno != EISDIR && errno != EPERM) continue;
          dir = true;   // DT_UNKNOWN on some file systems
        }
        int sub = ::openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) {
          RemoveContents(sub, depth + 1);
          ::close(sub);
        }
        if (::unlinkat(dfd, name, AT_REMOVEDIR) == 0) removed = true;
      }
    }
    if (!any || !removed) return;
  }
}

void OnSignal(int sig) {
  int saved = errno;
  RemoveRegisteredTempDirs();
  // SA_RESETHAND restored the default action; the signal is blocked while this handler
  // runs, so it is delivered (and ends the process) when the handler returns.
  ::raise(sig);
  errno = saved;
}

}  // namespace

bool RemoveTreeNoFollow(const char* dir) noexcept {
  int fd = ::open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return true;
    if (errno == ENOTDIR || errno == ELOOP) return ::unlink(dir) == 0 || errno == ENOENT;
    return false;
  }
  RemoveContents(fd, 0);
  ::close(fd);
  return ::rmdir(dir) == 0 || errno == ENOENT;
}

int RegisterTempDir(const std::filesystem::path& dir) {
  const std::string& s = dir.native();
  if (s.empty() || s.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kMaxTempDirs; ++i) {
    int expected = 0;
    if (!g_slots[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_slots[i].path, s.c_str(), s.size() + 1);
    g_slots[i].child.store(0);
    g_slots[i].state.store(2);
    if (!g_atexit_installed.exchange(true)) std::atexit(AtExit);
    return i;
  }
  return -1;
}

void SetTempDirChild(int slot, pid_t pid) {
  if (slot < 0 || slot >= kMaxTempDirs) return;
  g_slots[slot].child.store(pid);
}

void ForgetTempDir(int slot) {
  if (slot < 0 || slot >= kMaxTempDirs) return;
  int expected = 2;
  g_slots[slot].state.compare_exchange_strong(expected, 0);
}

void RemoveRegisteredTempDirs() noexcept {
  for (auto& s : g_slots) {
    int expected = 2;
    if (!s.state.compare_exchange_strong(expected, 3)) continue;
    StopChild(s.child.exchange(0));
    RemoveTreeNoFollow(s.path);
    s.state.store(0);
  }
}

int RegisteredTempDirs() {
  int n = 0;
  for (auto& s : g_slots) n += s.state.load() == 2;
  return n;
}

void InstallTempDirSignalCleanup() {
  if (g_signals_installed.exchange(true)) return;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;   // someone else decides
    struct sigaction sa {};
    sa.sa_handler = OnSignal;
    sigfillset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace mt::base
