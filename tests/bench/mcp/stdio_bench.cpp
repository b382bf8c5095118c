// stdio round-trip benchmark with a raw JSON-lines driver (no SDK client in the loop, so
// the figures are the server's): spawns the server, initializes, then
//  - latency: N sequential tools/call round trips → p50/p99 in µs;
//  - throughput: N calls pipelined (a writer thread, a reader here) → calls/s;
//  - server CPU per call, from the child's /proc/<pid>/stat utime+stime over both phases.
//   stdio_bench N TOOL -- SERVER_CMD...
// Prints one JSON object.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Child {
  pid_t pid;
  int in;    // we write
  int out;   // we read
};

Child Spawn(std::vector<char*> argv) {
  int to[2], from[2];
  if (pipe(to) || pipe(from)) std::exit(1);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(to[0], 0);
    dup2(from[1], 1);
    close(to[1]);
    close(from[0]);
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(to[0]);
  close(from[1]);
  return {pid, to[1], from[0]};
}

class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  bool Next(std::string* line) {
    for (;;) {
      auto nl = buf_.find('\n', pos_);
      if (nl != std::string::npos) {
        line->assign(buf_, pos_, nl - pos_);
        pos_ = nl + 1;
        if (pos_ > (1 << 20)) {
          buf_.erase(0, pos_);
          pos_ = 0;
        }
        return true;
      }
      char tmp[65536];
      ssize_t n = read(fd_, tmp, sizeof tmp);
      if (n <= 0) return false;
      buf_.append(tmp, size_t(n));
    }
  }

 private:
  int fd_;
  std::string buf_;
  size_t pos_ = 0;
};

void WriteAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n <= 0) std::exit(1);
    off += size_t(n);
  }
}

double CpuSeconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(f)), {});
  auto close = all.rfind(')');
  std::istringstream rest(all.substr(close + 2));
  std::string field;
  unsigned long utime = 0, stime = 0;
  for (int i = 3; i <= 15; ++i) {
    rest >> field;
    if (i == 14) utime = std::stoul(field);
    if (i == 15) stime = std::stoul(field);
  }
  return double(utime + stime) / double(sysconf(_SC_CLK_TCK));
}

// Reads /proc/<pid>/status VmRSS in KiB.
long RssKiB(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

std::string Call(int id, const std::string& tool) {
  return "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) +
         ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool + "\",\"arguments\":{}}}\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5 || std::strcmp(argv[3], "--") != 0) {
    std::fprintf(stderr, "usage: stdio_bench N TOOL -- SERVER_CMD...\n");
    return 2;
  }
  int n = std::atoi(argv[1]);
  std::string tool = argv[2];
  Child c = Spawn(std::vector<char*>(argv + 4, argv + argc));
  LineReader reader(c.out);
  std::string line;
  WriteAll(c.in,
           "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
           "\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}\n");
  if (!reader.Next(&line)) return 1;
  WriteAll(c.in, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  long idle_rss = RssKiB(c.pid);

  // Warm-up.
  for (int i = 1; i <= 200; ++i) {
    WriteAll(c.in, Call(i, tool));
    reader.Next(&line);
  }
  double cpu0 = CpuSeconds(c.pid);
  std::vector<double> rtt;
  rtt.reserve(size_t(n));
  for (int i = 0; i < n; ++i) {
    std::string req = Call(1000 + i, tool);
    auto t0 = std::chrono::steady_clock::now();
    WriteAll(c.in, req);
    if (!reader.Next(&line)) return 1;
    rtt.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    if (line.find("simple text") == std::string::npos && line.find("\"result\"") == std::string::npos) {
      std::fprintf(stderr, "bad response: %s\n", line.c_str());
      return 1;
    }
  }
  double cpu1 = CpuSeconds(c.pid);
  std::sort(rtt.begin(), rtt.end());

  auto t0 = std::chrono::steady_clock::now();
  std::thread writer([&] {
    std::string batch;
    for (int i = 0; i < n; ++i) {
      batch += Call(1000000 + i, tool);
      if (batch.size() > 32768) {
        WriteAll(c.in, batch);
        batch.clear();
      }
    }
    WriteAll(c.in, batch);
  });
  int got = 0;
  while (got < n && reader.Next(&line)) ++got;
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  writer.join();
  double cpu2 = CpuSeconds(c.pid);
  close(c.in);
  int status = 0;
  waitpid(c.pid, &status, 0);
  std::printf(
      "{\"calls\":%d,\"p50_us\":%.1f,\"p99_us\":%.1f,\"cpu_us_per_call_sequential\":%.2f,"
      "\"pipelined_calls_per_s\":%.0f,\"cpu_us_per_call_pipelined\":%.2f,\"idle_rss_kib\":%ld,\"answered\":%d}\n",
      n, rtt[rtt.size() / 2], rtt[rtt.size() * 99 / 100], (cpu1 - cpu0) * 1e6 / n, got / secs, (cpu2 - cpu1) * 1e6 / n,
      idle_rss, got);
  return got == n ? 0 : 1;
}
