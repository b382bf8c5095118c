#include "exporter/plugin_runner.h"

#include <algorithm>

#include "exporter/exposition_parser.h"
#include "exporter/log.h"
#include "exporter/root_fs.h"
#include "exporter/subprocess.h"
#include "exporter/text_util.h"

namespace mt::exporter {

namespace {
constexpr std::string_view kSuffix = "_metrics_plugin.sh";
constexpr int kExitDisable = 99;
}  // namespace

SplitOutput SplitPluginOutput(const std::string& output) {
  SplitOutput out;
  std::string_view text = output;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  size_t nl = text.rfind('\n');
  std::string_view last = nl == std::string_view::npos ? text : text.substr(nl + 1);
  std::string_view trimmed = Trim(last);
  if (trimmed.substr(0, 8) == "# STATE " || trimmed == "# STATE") {
    out.state = std::string(Trim(trimmed.substr(7)));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(0, nl);
  }
  out.metrics = std::string(text);
  return out;
}

SplitOutput SplitTruncatedPluginOutput(const std::string& kept, const std::string& tail) {
  SplitOutput out;
  size_t nl = kept.rfind('\n');
  out.metrics = nl == std::string::npos ? std::string() : kept.substr(0, nl + 1);
  // The first line of the tail may be the end of a longer line: skip it.
  size_t first = tail.find('\n');
  if (first != std::string::npos) out.state = SplitPluginOutput(tail.substr(first + 1)).state;
  return out;
}

PluginRunner::PluginRunner(PluginRunnerOptions options) : options_(std::move(options)) {
  if (!BecomeChildSubreaper()) Log("cannot become a child subreaper: processes a plugin detaches (setsid) may outlive it");
}

PluginRunner::~PluginRunner() {
  stop_ = true;
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  KillEscapedProcesses();  // anything left over from a run cut short
}

void PluginRunner::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void PluginRunner::Loop() {
  while (!stop_) {
    auto next = std::chrono::steady_clock::now() + options_.interval;
    PollOnce();
    std::unique_lock lock(wake_mu_);
    wake_.wait_until(lock, next, [this] { return stop_.load(); });
  }
}

std::vector<std::pair<std::string, std::string>> PluginRunner::Discover() const {
  std::vector<std::pair<std::string, std::string>> found;
  RootFs fs("/");
  for (const auto& dir : options_.dirs) {
    for (const auto& file : fs.List(dir)) {
      if (file.size() <= kSuffix.size() || !file.ends_with(kSuffix)) continue;
      std::string name = file.substr(0, file.size() - kSuffix.size());
      if (std::any_of(found.begin(), found.end(), [&](const auto& p) { return p.first == name; })) continue;
      std::string path = dir + "/" + file;
      if (fs.IsDir(path)) continue;
      found.emplace_back(name, path);
    }
  }
  return found;
}

void PluginRunner::PollOnce() {
  auto found = Discover();
  {
    // Plugins whose file disappeared stop being served (disabled ones stay disabled).
    std::lock_guard lock(mu_);
    for (auto it = plugins_.begin(); it != plugins_.end();) {
      bool present = std::any_of(found.begin(), found.end(), [&](const auto& p) { return p.first == it->first; });
      if (!present && !it->second.status.disabled) it = plugins_.erase(it);
      else ++it;
    }
  }
  for (const auto& [name, path] : found) {
    if (stop_) return;
    {
      std::lock_guard lock(mu_);
      auto it = plugins_.find(name);
      if (it != plugins_.end() && it->second.status.disabled) continue;
    }
    RunPlugin(name, path);
  }
}

void PluginRunner::RunPlugin(const std::string& name, const std::string& path) {
  std::optional<std::string> state;
  {
    std::lock_guard lock(mu_);
    state = plugins_[name].state;
  }
  SubprocessOptions so;
  so.timeout = options_.interval;
  so.capture_stderr = true;
  so.max_stderr = options_.max_stderr_bytes;
  so.max_output = options_.max_output_bytes;
  so.tail_bytes = kPluginStateTailBytes;
  so.kill_escaped = true;
  so.cancel = &stop_;
  if (state) so.extra_env.push_back("_PLUGIN_STATE=" + *state);
  SubprocessResult r = RunSubprocess({options_.bash, path, options_.host}, so);
  for (const auto& line : StderrLogLines(name, r.stderr_text, r.stderr_bytes,
                                         "at most " + std::to_string(options_.max_stderr_bytes) +
                                             " bytes per run are logged (--plugin-max-stderr)")) {
    Log(line);
  }
  if (r.escaped_killed > 0) {
    Log(name + ": killed " + std::to_string(r.escaped_killed) +
        " process(es) it left running outside its process group (setsid)");
  }

  std::lock_guard lock(mu_);
  Plugin& p = plugins_[name];
  p.status.name = name;
  p.status.path = path;
  p.status.runs++;
  p.status.last_seconds = r.seconds;
  p.status.last_exit = r.exit_code;
  p.status.escaped_killed += r.escaped_killed;
  if (r.stderr_truncated()) p.status.stderr_dropped_bytes += r.stderr_bytes - r.stderr_text.size();
  if (!r.started) {
    Log(name + ": " + r.error);
    p.status.families.clear();
    return;
  }
  if (stop_) return;
  if (r.timed_out) {
    p.status.timeouts++;
    p.status.families.clear();  // nothing fresh; a partial output is not trusted
    Log(name + " timed out");
    return;
  }
  if (r.exit_code == kExitDisable) {
    p.status.disabled = true;
    p.status.families.clear();
    p.cache.clear();
    Log(name + " exited 99: disabled for the life of the exporter");
    return;
  }
  if (r.exit_code != 0) Log(name + " exited " + std::to_string(r.exit_code));

  SplitOutput split;
  if (r.output_truncated()) {
    split = SplitTruncatedPluginOutput(r.output, r.output_tail);
    uint64_t dropped = r.output_bytes - split.metrics.size();
    p.status.dropped_bytes += dropped;
    Log(name + ": wrote " + std::to_string(r.output_bytes) + " bytes; only the first " +
        std::to_string(split.metrics.size()) + " are used, " + std::to_string(dropped) +
        " dropped (--plugin-max-bytes " + std::to_string(options_.max_output_bytes) + ")");
  } else {
    split = SplitPluginOutput(r.output);
  }
  r.output.clear();
  r.output.shrink_to_fit();
  if (split.state) p.state = *split.state;
  ParsedExposition parsed = ParseExposition(split.metrics, options_.max_series);
  p.status.invalid_lines += parsed.error_count;
  for (size_t i = 0; i < parsed.errors.size() && i < 3; ++i) {
    Log(name + ": dropped line " + std::to_string(parsed.errors[i].line_number) + ": " + parsed.errors[i].reason);
  }
  if (parsed.series_dropped > 0) {
    p.status.dropped_series += parsed.series_dropped;
    Log(name + ": " + std::to_string(parsed.series_dropped) + " samples over the limit of " +
        std::to_string(options_.max_series) + " series dropped (--plugin-max-series)");
  }
  if (!parsed.families.empty()) {
    p.cache = parsed.families;
    p.status.families = std::move(parsed.families);
  } else if (split.state && split.state->starts_with("__NONE__")) {
    p.cache.clear();
    p.status.families.clear();
  } else if (split.state && !p.cache.empty()) {
    p.status.families = p.cache;  // STATE-only poll: replay with the original timestamps
  } else {
    p.status.families.clear();    // empty output replays nothing
  }
}

std::vector<PluginStatus> PluginRunner::Snapshot() const {
  std::lock_guard lock(mu_);
  std::vector<PluginStatus> out;
  out.reserve(plugins_.size());
  for (const auto& [name, p] : plugins_) out.push_back(p.status);
  return out;
}

std::optional<std::string> PluginRunner::StateOf(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = plugins_.find(name);
  if (it == plugins_.end()) return std::nullopt;
  return it->second.state;
}

}  // namespace mt::exporter
