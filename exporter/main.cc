// mt-exporter: per-node Prometheus exporter (see docs/exporter.md).
#include <signal.h>
#include <sys/stat.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "exporter/collectors.h"
#include "exporter/exporter_collectable.h"
#include "exporter/http_server.h"
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
  if (!OpenLog(o.log_file, o.log_max_bytes)) {
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
    po.max_output_bytes = static_cast<size_t>(o.plugin_max_bytes);
    po.max_series = static_cast<size_t>(o.plugin_max_series);
    po.max_stderr_bytes = static_cast<size_t>(o.plugin_max_stderr);
    plugins = std::make_unique<PluginRunner>(po);
  }
  auto collectable = std::make_shared<ExporterCollectable>(o.host, BuildCollectors(o, fs), plugins.get());

  // An event loop owns the connections and two workers run the scrapes, so idle or slow
  // clients cost a descriptor, never a scrape (see exporter/http_server.h for the limits).
  HttpServerOptions ho;
  ho.listen = o.listen;
  HttpServer server(ho, [collectable] { return collectable->Collect(); });
  std::string listen_error;
  if (!server.Start(&listen_error)) {
    std::fprintf(stderr, "mt-exporter: cannot listen on %s: %s\n", o.listen.c_str(), listen_error.c_str());
    return 1;
  }
  if (plugins) plugins->Start();
  std::string addr = o.listen.substr(0, o.listen.rfind(':'));
  Log(std::string("mt-exporter ") + kVersion + " listening on " + addr + ":" + std::to_string(server.port()) +
      " host=" + o.host + " root=" + o.root);

  int sig = 0;
  sigwait(&stop_signals, &sig);
  Log(std::string("received ") + (sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "SIGHUP") + ", stopping");
  server.Stop();
  plugins.reset();
  return 0;
}
