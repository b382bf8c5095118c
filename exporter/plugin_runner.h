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
//   * output is parsed and validated: invalid lines are dropped and counted.
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
};

struct PluginStatus {
  std::string name;  // label value: the file name without "_metrics_plugin.sh"
  std::string path;
  uint64_t runs = 0;
  uint64_t invalid_lines = 0;  // mt_exporter_plugin_errors_total
  uint64_t timeouts = 0;
  int last_exit = 0;
  double last_seconds = 0;
  bool disabled = false;  // exited 99
  std::vector<prometheus::MetricFamily> families;  // what scrapes serve for it now
};

class PluginRunner {
 public:
  explicit PluginRunner(PluginRunnerOptions options);
  ~PluginRunner();  // stops the thread and kills a running plugin's group

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

}  // namespace mt::exporter
