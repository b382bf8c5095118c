#include "launcher/job/observe.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "launcher/job/child.h"
#include "launcher/launch/submit.h"

namespace mt::launch::job {
namespace fs = std::filesystem;
using base::Errc;
using base::Status;

static int OpenAppend(const fs::path& p) { return open(p.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644); }

Status StartExporter(const Plan& p, const fs::path& job_dir, const std::string& host, int port, bool rank0,
                          const std::string& fake_root, Observers* o) {
  std::error_code ec;
  fs::create_directories(job_dir / "metrics_exporter", ec);
  const fs::path log = job_dir / "metrics_exporter" / (host + ".log");
  char interval[32];
  std::snprintf(interval, sizeof interval, "%g", p.scrape_interval_s);
  std::vector<std::string> argv = {p.binaries.at("mt-exporter"),
                                   "--listen",
                                   (p.pack_tasks || p.backend == "local" ? "127.0.0.1:" : "0.0.0.0:") + std::to_string(port),
                                   "--interval", interval, "--host", host, "--log", log.string()};
  if (!fake_root.empty()) argv.insert(argv.end(), {"--root", fake_root});
  if (rank0) argv.insert(argv.end(), {"--job-dir", job_dir.string()});
  const int fd = OpenAppend(log);
  SpawnOptions so;
  so.own_group = true;
  so.die_with_parent = true;
  so.stdout_fd = fd;
  so.stderr_fd = fd;
  std::string err;
  o->exporter = Spawn(argv, so, &err);
  if (fd >= 0) close(fd);
  return o->exporter < 0 ? Status(Errc::kFailed, err) : Status::Ok();
}

int HttpGetStatus(int port, const std::string& path, double timeout_s) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int status = 0;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    const std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    (void)!write(fd, req.data(), req.size());
    pollfd pfd{fd, POLLIN, 0};
    char buf[256];
    if (poll(&pfd, 1, static_cast<int>(timeout_s * 1000)) > 0) {
      const ssize_t n = read(fd, buf, sizeof buf - 1);
      if (n > 12) {
        buf[n] = 0;
        std::sscanf(buf, "HTTP/%*s %d", &status);
      }
    }
  }
  close(fd);
  return status;
}

static std::string ScrapeConfig(const Plan& p, const std::vector<std::string>& targets) {
  const int interval = std::max(1, static_cast<int>(p.scrape_interval_s));
  std::string y = "# written by mt-job for this job's Prometheus\nglobal:\n  scrape_interval: " + std::to_string(std::min(interval, 5)) +
                  "s\nscrape_configs:\n  - job_name: node_hw\n    scrape_interval: " + std::to_string(interval) +
                  "s\n    scrape_timeout: " + std::to_string(std::min(interval, 8)) + "s\n    static_configs:\n      - targets:\n";
  for (const auto& t : targets) y += "          - \"" + t + "\"\n";
  return y;
}

Status StartPrometheus(const Plan& p, const fs::path& job_dir, const std::vector<std::string>& targets,
                            const std::string& head_host, Observers* o) {
  const fs::path dir = job_dir / "prometheus";
  std::error_code ec;
  fs::create_directories(dir, ec);
  {
    std::ofstream f(dir / "ray_prometheus.yml");
    f << ScrapeConfig(p, targets);
    if (!f) return Status(Errc::kIo, "cannot write " + (dir / "ray_prometheus.yml").string());
  }
  int port = p.prometheus_port_first;
  for (int attempt = 0; attempt < 3; ++attempt) {
    port = FirstFreePort(port, p.prometheus_port_last);
    if (port < 0) break;
    const int fd = OpenAppend(dir / "prometheus.log");
    SpawnOptions so;
    so.own_group = true;
    so.die_with_parent = true;
    so.stdout_fd = fd;
    so.stderr_fd = fd;
    std::string err;
    const pid_t pid = Spawn({p.binaries.at("prometheus"), "--config.file=" + (dir / "ray_prometheus.yml").string(),
                             "--storage.tsdb.path=" + dir.string(), "--storage.tsdb.retention.time=10y",
                             "--web.listen-address=127.0.0.1:" + std::to_string(port)},
                            so, &err);
    if (fd >= 0) close(fd);
    if (pid < 0) return Status(Errc::kFailed, err);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int code = 0;
    bool exited = false;
    while (std::chrono::steady_clock::now() < until) {
      if (Reap(pid, &code)) {
        exited = true;
        break;
      }
      if (HttpGetStatus(port, "/-/ready", 1) == 200) {
        o->prometheus = pid;
        o->prometheus_port = port;
        if (port != p.prometheus_port_first)
          std::printf("[Prometheus] WARNING: port %d was occupied; using %d instead\n", p.prometheus_port_first, port);
        std::string t;
        for (const auto& x : targets) t += (t.empty() ? "" : ",") + x;
        std::printf("[Prometheus] Started on port %d (node_hw: %s; TSDB: %s)\n", port, t.c_str(), dir.c_str());
        const char* user = std::getenv("USER");
        const char* login = std::getenv("SLURM_SUBMIT_HOST");
        std::printf("[Prometheus] To view from your machine: ssh -J %s@%s -L %d:localhost:%d root@%s\n",
                    user ? user : "root", login ? login : head_host.c_str(), port, port, head_host.c_str());
        std::fflush(stdout);
        return Status::Ok();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    if (!exited) Stop(pid, true, 5);
    ++port;   // lost a race for this port (or it never became ready): try the next one
    if (port > p.prometheus_port_last) break;
  }
  return Status(Errc::kFailed, "could not bind any port in " + std::to_string(p.prometheus_port_first) + "-" +
         std::to_string(p.prometheus_port_last));
}

void StopObservers(Observers* o, const fs::path& job_dir) {
  if (o->prometheus > 0) {
    const int code = Stop(o->prometheus, true, 30);
    std::printf("[Prometheus] Stopped (exit %d); TSDB kept in %s\n", code, (job_dir / "prometheus").c_str());
    o->prometheus = -1;
  }
  if (o->exporter > 0) {
    Stop(o->exporter, true, 10);
    o->exporter = -1;
  }
  std::fflush(stdout);
}

}  // namespace mt::launch::job
