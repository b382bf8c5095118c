// Runs *_metrics_plugin.sh scripts on an interval, in a thread of its own, following the
// original metrics_exporter.sh contract:
//   * discovery in every plugin dir on every poll (files ending in _metrics_plugin.sh,
//     name order; a name already found in an earlier dir is skipped);
//   * `bash <plugin> <host>`, timeout = interval, the whole process group SIGKILLed on
//     timeout (and leftovers killed once the plugin itself exits);
//   * exit 99 disables the plugin for the life of the exporter;
//   * a last stdout line `# STATE <v>` is stored and handed back in $_PLUGIN_STATE on the
//     next run; STATE-only output replays the cached metrics (explicit timestamps
//     unchanged); `# STATE __NONE__...` clears the cache; empty output replays nothing;
//   * output is parsed and validated: invalid lines are dropped and counted;
//   * bounded: stdout past max_output_bytes and samples past max_series are dropped and
//     counted, stderr past max_stderr_bytes per run is not logged (counted), and
//     processes that left the plugin's group (setsid) are killed after each run (the
//     runner makes the process a child subreaper so that they re-parent to it).
// Scrapes read the latest snapshot and never wait for a plugin.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <prometheus/metric_family.h>

namespace mt::exporter {

struct PluginRunnerOptions {
  std::vector<std::string> dirs;
  std::string host;
  std::chrono::milliseconds interval{10000};
  std::string bash = "bash";
  size_t max_output_bytes = 1u << 20;  // stdout kept per run (--plugin-max-bytes)
  size_t max_series = 10000;           // samples kept per run (--plugin-max-series)
  size_t max_stderr_bytes = 4096;      // stderr logged per run (--plugin-max-stderr)
};

// Bytes of the end of a cut stdout kept to find its `# STATE` line.
inline constexpr size_t kPluginStateTailBytes = 4096;

struct PluginStatus {
  std::string name;  // label value: the file name without "_metrics_plugin.sh"
  std::string path;
  uint64_t runs = 0;
  uint64_t invalid_lines = 0;  // mt_exporter_plugin_errors_total
  uint64_t timeouts = 0;
  int last_exit = 0;
  double last_seconds = 0;
  bool disabled = false;  // exited 99
  uint64_t dropped_bytes = 0;          // stdout bytes over max_output_bytes
  uint64_t dropped_series = 0;         // samples over max_series
  uint64_t stderr_dropped_bytes = 0;   // stderr bytes over max_stderr_bytes, not logged
  uint64_t escaped_killed = 0;         // processes that had left the group, killed
  std::vector<prometheus::MetricFamily> families;  // what scrapes serve for it now
};

class PluginRunner {
 public:
  // Makes the process a child subreaper (see BecomeChildSubreaper).
  explicit PluginRunner(PluginRunnerOptions options);
  ~PluginRunner();  // stops the thread and kills a running plugin's group and its escapees

  // Starts the background loop (first poll immediately).
  void Start();
  // One poll over all plugins, on the calling thread (tests, and the loop itself).
  void PollOnce();

  std::vector<PluginStatus> Snapshot() const;
  // State value currently stored for a plugin (tests).
  std::optional<std::string> StateOf(const std::string& name) const;

 private:
  struct Plugin {
    PluginStatus status;
    std::optional<std::string> state;
    std::vector<prometheus::MetricFamily> cache;  // last real metrics, for replay
  };

  std::vector<std::pair<std::string, std::string>> Discover() const;  // (name, path)
  void RunPlugin(const std::string& name, const std::string& path);
  void Loop();

  PluginRunnerOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, Plugin> plugins_;  // by name
  std::atomic<bool> stop_{false};
  std::mutex wake_mu_;
  std::condition_variable wake_;
  std::thread thread_;
};

// Splits plugin stdout into metric text and the STATE value of its last line.
struct SplitOutput {
  std::string metrics;
  std::optional<std::string> state;
};
SplitOutput SplitPluginOutput(const std::string& output);

// The metrics and STATE of a stdout that was cut at max_output_bytes: `kept` is its
// beginning and `tail` the last bytes of the whole output. The metrics are `kept` up to
// its last complete line; the STATE is that of the last complete line in `tail`.
SplitOutput SplitTruncatedPluginOutput(const std::string& kept, const std::string& tail);

}  // namespace mt::exporter
