#include "exporter/options.h"

#include <unistd.h>

#include <cmath>
#include <set>

#include "exporter/http_server.h"
#include "exporter/text_util.h"
#include "exporter/version.h"

namespace mt::exporter {

namespace {
const std::set<std::string, std::less<>> kCollectorNames = {
    "stat", "memory", "pressure", "netdev", "tcp", "rdma", "kmsg", "kfd", "amdgpu", "nvidia", "training"};
}  // namespace

std::string ShortHostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  std::string h = buf;
  return h.substr(0, h.find('.'));
}

std::string Usage() {
  return R"(usage: mt-exporter [flags]

Per-node Prometheus exporter for training jobs: host procfs/sysfs, AMD and NVIDIA GPUs,
training scalars (TFEvent file or job log), and *_metrics_plugin.sh plugins.

  --listen ADDR          address to serve /metrics on (default 127.0.0.1:9400, this host only;
                         use 0.0.0.0:9400 or the node's address to be scraped from elsewhere)
  --interval S           plugin and nvidia-smi poll period; also the plugin timeout (default 10)
  --host NAME            value of the host label (default: short hostname)
  --plugin-dir DIR       directory of *_metrics_plugin.sh plugins (repeatable)
  --root DIR             read /proc, /sys and /dev/kmsg under DIR (default /)
  --job-dir DIR          job output dir: newest events.out.tfevents.* below it, else its job log
  --tfevents PATH        TFEvent file, or directory searched recursively (overrides --job-dir)
  --job-log FILE         job log for the `completed step:` fallback (default: from --job-dir)
  --tfevents-since EPOCH only event files created at/after EPOCH (default: exporter start; 0 = any)
  --nvidia MODE          auto | smi | off (default auto: the NVIDIA collector runs if nvidia-smi is found)
  --nvidia-smi PATH      nvidia-smi binary (default: nvidia-smi on PATH)
  --no-collector NAME    disable a native collector (repeatable): stat memory pressure netdev tcp
                         rdma kmsg kfd amdgpu nvidia training
  --log FILE             append diagnostics and plugins' stderr to FILE instead of stderr
  --log-max-bytes N      past N bytes, FILE is renamed to FILE.1 and restarted (default 16777216;
                         0 = never)
  --plugin-max-bytes N   plugin stdout used per run; the rest is dropped and counted (default 1048576)
  --plugin-max-series N  plugin samples kept per run; the rest are dropped and counted (default 10000)
  --plugin-max-stderr N  plugin stderr bytes logged per run; the rest is dropped (default 4096)
  --help, --version
)";
}

ParseResult ParseOptions(int argc, const char* const* argv) {
  ParseResult r;
  Options& o = r.options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_inline = false;
    if (arg.starts_with("--")) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        has_inline = true;
      }
    }
    if (arg == "--help" || arg == "-h") {
      r.exit_now = true;
      r.output = Usage();
      return r;
    }
    if (arg == "--version") {
      r.exit_now = true;
      r.output = std::string("mt-exporter ") + kVersion + "\n";
      return r;
    }
    static const std::set<std::string, std::less<>> kWithValue = {
        "--listen", "--interval", "--host", "--plugin-dir", "--root", "--job-dir", "--tfevents",
        "--job-log", "--tfevents-since", "--nvidia", "--nvidia-smi", "--no-collector", "--log",
        "--log-max-bytes", "--plugin-max-bytes", "--plugin-max-series", "--plugin-max-stderr"};
    if (!kWithValue.contains(arg)) {
      r.error = "unknown flag '" + arg + "' (see --help)";
      return r;
    }
    if (!has_inline) {
      if (i + 1 >= argc) {
        r.error = arg + " needs a value";
        return r;
      }
      value = argv[++i];
    }
    if (value.empty()) {
      r.error = arg + " needs a non-empty value";
      return r;
    }
    auto count = [&](uint64_t min, uint64_t max, uint64_t* out) {
      auto v = ParseU64(value);
      if (!v || *v < min || *v > max) {
        r.error = arg + " must be a whole number in [" + std::to_string(min) + ", " + std::to_string(max) +
                  "], got '" + value + "'";
        return false;
      }
      *out = *v;
      return true;
    };
    if (arg == "--listen") {
      std::string why;
      if (!ParseListenAddress(value, &why)) {
        r.error = "--listen: " + why;
        return r;
      }
      o.listen = value;
    } else if (arg == "--log-max-bytes") {
      if (!count(0, uint64_t{1} << 40, &o.log_max_bytes)) return r;
      if (o.log_max_bytes != 0 && o.log_max_bytes < 4096) {
        r.error = "--log-max-bytes must be 0 or at least 4096, got '" + value + "'";
        return r;
      }
    } else if (arg == "--plugin-max-bytes") {
      if (!count(1024, uint64_t{1} << 30, &o.plugin_max_bytes)) return r;
    } else if (arg == "--plugin-max-series") {
      if (!count(1, 10000000, &o.plugin_max_series)) return r;
    } else if (arg == "--plugin-max-stderr") {
      if (!count(0, uint64_t{1} << 30, &o.plugin_max_stderr)) return r;
    } else if (arg == "--interval") {
      auto v = ParseDouble(value);
      if (!v || !std::isfinite(*v) || *v < 0.1 || *v > 3600) {
        r.error = "--interval must be a number of seconds in [0.1, 3600], got '" + value + "'";
        return r;
      }
      o.interval_seconds = *v;
    } else if (arg == "--host") o.host = value;
    else if (arg == "--plugin-dir") o.plugin_dirs.push_back(value);
    else if (arg == "--root") o.root = value;
    else if (arg == "--job-dir") o.job_dir = value;
    else if (arg == "--tfevents") o.tfevents = value;
    else if (arg == "--job-log") o.job_log = value;
    else if (arg == "--tfevents-since") {
      auto v = ParseDouble(value);
      if (!v || !std::isfinite(*v) || *v < 0) {
        r.error = "--tfevents-since must be a Unix time in seconds, got '" + value + "'";
        return r;
      }
      o.tfevents_since = *v;
    } else if (arg == "--nvidia") {
      if (value != "auto" && value != "smi" && value != "off") {
        r.error = "--nvidia must be auto, smi or off, got '" + value + "'";
        return r;
      }
      o.nvidia = value;
    } else if (arg == "--nvidia-smi") o.nvidia_smi = value;
    else if (arg == "--no-collector") {
      if (!kCollectorNames.contains(value)) {
        r.error = "--no-collector: unknown collector '" + value + "'";
        return r;
      }
      o.disabled_collectors.push_back(value);
    } else if (arg == "--log") o.log_file = value;
  }
  if (o.host.empty()) o.host = ShortHostname();
  return r;
}

}  // namespace mt::exporter
