// mt-exporter command line.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mt::exporter {

struct Options {
  // Loopback unless asked: the exporter shows host details and plugin output to whoever
  // can reach it. Nodes scraped from elsewhere pass --listen (the systemd unit and the
  // launcher do).
  std::string listen = "127.0.0.1:9400";
  double interval_seconds = 10;          // plugin poll period and plugin timeout
  std::string host;                      // host label; default: short hostname
  std::vector<std::string> plugin_dirs;  // *_metrics_plugin.sh directories
  std::string root = "/";                // prefix for /proc, /sys and /dev/kmsg
  std::string job_dir;                   // training: search here for TFEvent files and the job log
  std::string tfevents;                  // training: TFEvent file or directory (overrides --job-dir search)
  std::string job_log;                   // training: log for the `completed step:` fallback
  std::optional<double> tfevents_since;  // accept event files created at/after this epoch (default: start time)
  std::string nvidia = "auto";           // auto | smi | off
  std::string nvidia_smi = "nvidia-smi";
  std::vector<std::string> disabled_collectors;
  std::string log_file;                  // exporter diagnostics (default stderr)
  uint64_t log_max_bytes = 16u << 20;    // --log FILE is rotated to FILE.1 past this (0 = never)
  uint64_t plugin_max_bytes = 1u << 20;  // plugin stdout kept per run
  uint64_t plugin_max_series = 10000;    // plugin samples kept per run
  uint64_t plugin_max_stderr = 4096;     // plugin stderr logged per run
};

struct ParseResult {
  Options options;
  bool exit_now = false;  // --help / --version printed
  std::string error;      // non-empty: usage error (exit 2)
  std::string output;     // text for stdout (help/version)
};

ParseResult ParseOptions(int argc, const char* const* argv);
std::string Usage();
// The short hostname (up to the first '.').
std::string ShortHostname();

}  // namespace mt::exporter
