// A fuzz input as a file the readers can open by path: the bytes in a memfd, reached through
// /proc/self/fd (no disk, no clean-up beyond the descriptor, closed when this goes away).
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <string>

class MemfdFile {
 public:
  MemfdFile(const void* data, size_t size) : fd_(memfd_create("fuzz", 0)) {
    if (fd_ >= 0 && write(fd_, data, size) != static_cast<ssize_t>(size)) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~MemfdFile() {
    if (fd_ >= 0) close(fd_);
  }
  MemfdFile(const MemfdFile&) = delete;
  MemfdFile& operator=(const MemfdFile&) = delete;
  bool ok() const { return fd_ >= 0; }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};
