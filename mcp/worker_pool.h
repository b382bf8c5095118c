// A pool of threads that grows on demand (up to a cap) and keeps idle threads for reuse:
// requests that block (waiting on the client, a long scan) must not hold up others, and
// spawning a thread per request costs more than the typical request itself.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mt::mcp {

class WorkerPool {
 public:
  explicit WorkerPool(size_t max_threads = 64) : max_(max_threads) {}
  ~WorkerPool() { Drain(); }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Submit(std::function<void()> task);
  // Runs every queued task to completion, then joins the threads.
  void Drain();

 private:
  void Loop();

  const size_t max_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool stopping_ = false;
};

}  // namespace mt::mcp
