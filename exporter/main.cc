// mt-exporter: per-node Prometheus exporter (see docs/exporter.md).
#include <signal.h>
#include <sys/stat.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <prometheus/exposer.h>

#include "exporter/collectors.h"
#include "exporter/exporter_collectable.h"
#include "exporter/log.h"
#include "exporter/options.h"
#include "exporter/plugin_runner.h"
#include "exporter/root_fs.h"
#include "exporter/version.h"

namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace mt::exporter;
  ParseResult parsed = ParseOptions(argc, argv);
  if (!parsed.error.empty()) {
    std::fprintf(stderr, "mt-exporter: %s\n", parsed.error.c_str());
    return 2;
  }
  if (parsed.exit_now) {
    std::fputs(parsed.output.c_str(), stdout);
    return 0;
  }
  const Options& o = parsed.options;
  if (!IsDirectory(o.root)) {
    std::fprintf(stderr, "mt-exporter: --root %s is not a directory\n", o.root.c_str());
    return 2;
  }
  if (!OpenLog(o.log_file)) {
    std::fprintf(stderr, "mt-exporter: cannot open --log %s\n", o.log_file.c_str());
    return 2;
  }
  for (const auto& d : o.plugin_dirs) {
    if (!IsDirectory(d)) Log("plugin dir " + d + " does not exist (yet); it is searched on every poll");
  }

  // Every thread started from here inherits this mask; main waits for the signals.
  signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  RootFs fs(o.root);
  std::unique_ptr<PluginRunner> plugins;
  if (!o.plugin_dirs.empty()) {
    PluginRunnerOptions po;
    po.dirs = o.plugin_dirs;
    po.host = o.host;
    po.interval = std::chrono::milliseconds(static_cast<long long>(o.interval_seconds * 1000));
    plugins = std::make_unique<PluginRunner>(po);
  }
  auto collectable = std::make_shared<ExporterCollectable>(o.host, BuildCollectors(o, fs), plugins.get());

  std::unique_ptr<prometheus::Exposer> exposer;
  try {
    // Keep-alive lets Prometheus reuse its connection between scrapes (no TCP setup per
    // scrape). civetweb holds a worker thread per open connection, hence 4 workers: room
    // for two scrapers keeping connections open plus ad-hoc curls.
    exposer = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
        "listening_ports", o.listen, "num_threads", "4", "enable_keep_alive", "yes",
        "keep_alive_timeout_ms", "30000", "tcp_nodelay", "1"});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mt-exporter: cannot listen on %s: %s\n", o.listen.c_str(), e.what());
    return 1;
  }
  exposer->RegisterCollectable(collectable);
  if (plugins) plugins->Start();
  auto ports = exposer->GetListeningPorts();
  std::string addr = o.listen.substr(0, o.listen.rfind(':'));
  Log(std::string("mt-exporter ") + kVersion + " listening on " + addr + ":" +
      (ports.empty() ? std::string("?") : std::to_string(ports[0])) + " host=" + o.host + " root=" + o.root);

  int sig = 0;
  sigwait(&stop_signals, &sig);
  Log(std::string("received ") + (sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "SIGHUP") + ", stopping");
  exposer.reset();
  plugins.reset();
  return 0;
}
