// A small real TSDB for the query_tsdb tests: OpenMetrics written here, turned into
// Prometheus blocks by the real promtool (as mt-simtrain does for the case studies).
// Two hosts × two GPUs, 3 h at a 15 s step from kStart: gauge hw_gpu_power_watts
// (host a: 900 W, host b: GPU 1 at 300 W), counter hw_tcp_retransmits_total (b: 2/s).
#pragma once
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace mt::tools::testing {

inline constexpr long kStart = 1770681600;   // 2026-02-10T00:00:00Z
inline constexpr long kEnd = kStart + 3 * 3600;

// Fresh temp directory, removed by the caller (or left in /tmp on a failed test).
inline std::filesystem::path TempDir(const std::string& tag) {
  std::string t = (std::filesystem::temp_directory_path() / ("mt-tsdb-test-" + tag + "-XXXXXX")).string();
  if (!::mkdtemp(t.data())) std::abort();
  return t;
}

// Writes blocks into `dir` (created). Returns "" or promtool's failure.
inline std::string MakeTsdb(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const auto om = dir.parent_path() / (dir.filename().string() + ".om");
  {
    std::ofstream o(om);
    o << "# HELP hw_gpu_power_watts GPU power\n# TYPE hw_gpu_power_watts gauge\n";
    for (const char* h : {"a", "b"})
      for (int g = 0; g < 2; ++g)
        for (long t = kStart; t <= kEnd; t += 15) {
          double v = (std::string(h) == "b" && g == 1) ? 300.0 : 900.0;
          o << "hw_gpu_power_watts{host=\"" << h << "\",gpu=\"" << g << "\"} " << v << " " << t << "\n";
        }
    o << "# HELP hw_tcp_retransmits TCP retransmits\n# TYPE hw_tcp_retransmits counter\n";
    for (const char* h : {"a", "b"})
      for (long t = kStart; t <= kEnd; t += 15) {
        double v = std::string(h) == "b" ? 2.0 * static_cast<double>(t - kStart) : 1000.0;
        o << "hw_tcp_retransmits_total{host=\"" << h << "\"} " << v << " " << t << "\n";
      }
    o << "# EOF\n";
  }
  std::string cmd = "promtool tsdb create-blocks-from openmetrics -q '" + om.string() + "' '" + dir.string() + "' > '" +
                    om.string() + ".log' 2>&1";
  int rc = std::system(cmd.c_str());
  std::filesystem::remove(om);
  if (rc != 0) return "promtool failed (" + std::to_string(rc) + "), see " + om.string() + ".log";
  return "";
}

// Port range for the tests' Prometheus servers: MT_TSDB_TEST_PORT (default 19750) + 0..29
// (the manager tests +0..19, the store-signal test +20..24, the coverage and job-label tests +25..29).
inline int TestPortBase() {
  const char* p = std::getenv("MT_TSDB_TEST_PORT");
  return p && *p ? std::atoi(p) : 19750;
}

}  // namespace mt::tools::testing
