#include "mcp/worker_pool.h"

namespace mt::mcp {

void WorkerPool::Submit(std::function<void()> task) {
  std::lock_guard lock(mu_);
  queue_.push_back(std::move(task));
  if (idle_ > 0) {
    cv_.notify_one();
  } else if (threads_.size() < max_) {
    threads_.emplace_back([this] { Loop(); });
  }
}

void WorkerPool::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    ++idle_;
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    --idle_;
    if (queue_.empty()) return;   // stopping and nothing left
    auto task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

void WorkerPool::Drain() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    threads.swap(threads_);
  }
  cv_.notify_all();
  for (auto& t : threads) t.join();
  std::lock_guard lock(mu_);
  stopping_ = false;
}

}  // namespace mt::mcp
