#include "mcp/signals.h"

#include <signal.h>

#include <thread>

namespace mt::mcp {

void StopOnSignals(std::function<void()> stop) {
  signal(SIGPIPE, SIG_IGN);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set, stop = std::move(stop)] {
    int sig = 0;
    sigwait(&set, &sig);
    stop();
  }).detach();
}

}  // namespace mt::mcp
