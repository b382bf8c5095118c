// --observe (the original's RAY=1 observability, without Ray): mt-exporter on every node and,
// on node 0, a real Prometheus whose TSDB lives in <job>/prometheus/. Both are stopped by the
// task that started them when training ends, however it ends.
#pragma once
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"
#include "launcher/launch/plan.h"

namespace mt::launch::job {

struct Observers {
  pid_t exporter = -1;
  pid_t prometheus = -1;
  int prometheus_port = -1;
};

// Starts this node's exporter. `targets_root` is a fake /proc+/sys root (simulator runs) or "".
base::Status StartExporter(const Plan& p, const std::filesystem::path& job_dir, const std::string& host, int port,
                           bool rank0, const std::string& fake_root, Observers* o);

// Writes prometheus/ray_prometheus.yml for `targets` (host:port), probes ports from the plan's
// range, starts Prometheus on 127.0.0.1 and waits until it is ready. Prints the port and the
// SSH tunnel hint to stdout (the job log).
base::Status StartPrometheus(const Plan& p, const std::filesystem::path& job_dir, const std::vector<std::string>& targets,
                             const std::string& head_host, Observers* o);

void StopObservers(Observers* o, const std::filesystem::path& job_dir);

// GET http://127.0.0.1:port/path; returns the HTTP status (0 when no answer).
int HttpGetStatus(int port, const std::string& path, double timeout_s);

}  // namespace mt::launch::job
