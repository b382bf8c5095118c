#include "launcher/sim/realtime.h"

#include <csignal>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include "base/status.h"
#include "launcher/sim/fake_root.h"
#include "launcher/sim/job_log.h"
#include "launcher/sim/metrics_model.h"
#include "launcher/sim/tb_scalars.h"
#include "launcher/sim/tfevents_writer.h"

namespace mt::launch::sim {
namespace fs = std::filesystem;
using base::Errc;
using base::Status;
namespace {

volatile std::sig_atomic_t g_signal = 0;
void OnSignal(int sig) { g_signal = sig; }

double WallNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Segment {
  double at;          // wall time at which these lines appear
  std::string text;   // complete lines
};

bool StepLineOf(const std::string& line, int64_t* step) {
  const size_t p = line.find("completed step: ");
  if (p == std::string::npos) return false;
  *step = std::atoll(line.c_str() + p + 16);
  return true;
}

// Splits the rendered log into timed segments: everything up to the first step, each
// step's lines (and its checkpoint lines), then the ending.
std::vector<Segment> Segments(const std::string& log, const Timeline& rt, double now) {
  std::vector<Segment> out;
  std::vector<std::string> lines;
  for (size_t pos = 0; pos < log.size();) {
    size_t nl = log.find('\n', pos);
    if (nl == std::string::npos) nl = log.size();
    lines.push_back(log.substr(pos, nl - pos + 1));
    pos = nl + 1;
  }
  size_t i = 0;
  Segment head{now, ""};
  auto is_step = [&](size_t k, int64_t* step) { return StepLineOf(lines[k], step); };
  int64_t step = 0;
  if (rt.steps.empty()) {
    // No step ever completes: the start-up output now, the failure when it happens.
    size_t split = lines.size();
    for (size_t k = 0; k < lines.size(); ++k)
      if (lines[k].find("Total memory:") != std::string::npos) split = k + 1;
    for (; i < split; ++i) head.text += lines[i];
    out.push_back(head);
    Segment tail{rt.crash_time >= 0 ? rt.crash_time : rt.job_end, ""};
    for (; i < lines.size(); ++i) tail.text += lines[i];
    out.push_back(tail);
    return out;
  }
  for (; i < lines.size() && !is_step(i, &step); ++i) head.text += lines[i];
  out.push_back(head);
  size_t idx = 0;
  while (i < lines.size() && idx < rt.steps.size()) {
    Segment seg{rt.steps[idx].end, ""};
    const int64_t cur = rt.steps[idx].step;
    // This step's lines, plus anything up to the next step's first line (checkpoint saves).
    for (; i < lines.size(); ++i) {
      int64_t s2;
      if (is_step(i, &s2) && s2 != cur) break;
      if (idx + 1 == rt.steps.size() && !is_step(i, &s2) && lines[i].find("Saved a checkpoint") == std::string::npos &&
          lines[i].find("Token indices") == std::string::npos)
        break;  // the ending follows the last step
      seg.text += lines[i];
    }
    out.push_back(seg);
    ++idx;
  }
  Segment tail{rt.crash_time >= 0 ? rt.crash_time : rt.job_end, ""};
  for (; i < lines.size(); ++i) tail.text += lines[i];
  if (!tail.text.empty()) out.push_back(tail);
  return out;
}

// Keeps only task `rank`'s training output, without its label (what the task itself prints).
std::string RankOnly(const std::string& text, int rank, int ntasks, bool* in_training) {
  const std::string label = RankLabel(rank, ntasks);
  std::string out;
  for (size_t pos = 0; pos < text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    if (line.rfind("== Training BEGIN", 0) == 0) *in_training = true;
    if (*in_training && line.rfind(label, 0) == 0) {
      const std::string body = line.substr(label.size());
      if (body.rfind("NODE_EXIT ", 0) != 0) out += body + "\n";  // NODE_EXIT is the wrapper's line
    }
    pos = nl + 1;
  }
  return out;
}

}  // namespace

Timeline RealtimeTimeline(const Scenario& s, double now, const RealtimeOptions& opts) {
  Timeline tl = BuildTimeline(s);
  const double t0 = tl.train_begin;
  const double t1 = tl.steps.empty() ? tl.restore_end + s.compile_s * 0.55 : tl.steps.front().start;
  double typical = tl.steps.size() > 1 ? tl.steps[1].seconds : s.compile_s;
  if (tl.steps.size() > 2) typical = tl.steps[tl.steps.size() / 2].seconds;
  const double f = opts.step_seconds / std::max(typical, 1e-6);
  auto map = [&](double t) {
    if (t < 0) return t;
    if (t <= t1) return now + (t - t0) / std::max(t1 - t0, 1e-6) * opts.startup_seconds;
    return now + opts.startup_seconds + (t - t1) * f;
  };
  for (double* v : {&tl.job_start, &tl.preflight_begin, &tl.preflight_end, &tl.pull_begin, &tl.pull_end, &tl.ecc_begin,
                    &tl.ecc_end, &tl.train_begin, &tl.memstats, &tl.restore_end, &tl.busy_wait_start, &tl.crash_time,
                    &tl.heartbeat_stop, &tl.node_death, &tl.train_end, &tl.job_end, &tl.metrics_start, &tl.metrics_end})
    *v = map(*v);
  for (auto& r : tl.steps) {
    r.start = map(r.start);
    r.end = map(r.end);
  }
  tl.metrics_start = now;
  if (tl.outcome == Outcome::kHanging) tl.metrics_end = tl.train_end = 1e18;  // hangs until killed
  return tl;
}

int RunRealtime(const Scenario& s, const RealtimeOptions& opts, std::string* error) {
  if (opts.step_seconds <= 0 || opts.root_interval <= 0) return *error = "step and root intervals must be positive", -1;
  if (opts.rank >= static_cast<int>(s.hosts.size())) return *error = "--rank is beyond the scenario's hosts", -1;
  g_signal = 0;
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  const double now = WallNow();
  const Timeline rt = RealtimeTimeline(s, now, opts);
  const int ntasks = static_cast<int>(s.hosts.size());
  const std::string log = RenderJobLog(s, rt, {"/outputs/.artifacts/realtime", "/outputs/" + s.JobDirName()});
  std::vector<Segment> segs = Segments(log, rt, now);

  std::FILE* out = stdout;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> log_file(nullptr, &std::fclose);
  if (opts.rank < 0 && !opts.log_path.empty()) {
    log_file.reset(std::fopen(opts.log_path.c_str(), "wb"));
    if (!log_file) return *error = "cannot create " + opts.log_path.string(), -1;
    out = log_file.get();
  }

  // Event file: rank 0, or the whole job.
  TfEventWriter events;
  const bool write_events = !opts.out_dir.empty() && opts.rank <= 0;
  if (write_events) {
    const fs::path dir = opts.out_dir / s.RunName() / "tensorboard" / s.RunName();
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return *error = "cannot create " + dir.string() + ": " + ec.message(), -1;
    const std::string host = opts.event_host.empty() ? s.hosts[static_cast<size_t>(std::max(opts.rank, 0))] : opts.event_host;
    if (Status e = events.Open(dir / EventFileName(static_cast<int64_t>(std::floor(now)), host), now); !e.ok())
      return *error = e.message(), -1;
    if (Status e = events.Flush(); !e.ok()) return *error = e.message(), -1;
  }

  const MetricsModel model(s, rt);
  std::vector<std::unique_ptr<FakeRoot>> roots;
  if (!opts.fake_root.empty()) {
    for (int h = 0; h < ntasks; ++h) {
      if (opts.rank >= 0 && h != opts.rank) continue;
      const fs::path dir = opts.rank >= 0 ? opts.fake_root : opts.fake_root / s.hosts[static_cast<size_t>(h)];
      roots.push_back(std::make_unique<FakeRoot>(model, dir, h));
      if (Status e = roots.back()->Init(); !e.ok()) return *error = e.message(), -1;
    }
  }

  size_t next_seg = 0, next_step = 0;
  double last_root = -1;
  uint64_t tick = 0;
  bool in_training = false;
  const double end = rt.outcome == Outcome::kHanging ? 1e18 : rt.job_end;
  for (;;) {
    const double t = WallNow();
    while (next_seg < segs.size() && segs[next_seg].at <= t) {
      const std::string text = opts.rank >= 0 ? RankOnly(segs[next_seg].text, opts.rank, ntasks, &in_training)
                                              : segs[next_seg].text;
      if (std::fwrite(text.data(), 1, text.size(), out) != text.size() || std::fflush(out) != 0)
        return *error = "cannot write the log", -1;
      ++next_seg;
    }
    if (write_events) {
      bool wrote = false;
      while (next_step < rt.steps.size() && rt.steps[next_step].end <= t) {
        const StepRecord& r = rt.steps[next_step++];
        for (const auto& [tag, v] : StepScalars(s, r))
          if (Status e = events.AddScalar(StepWallTime(r), r.step, tag, static_cast<float>(v)); !e.ok())
            return *error = e.message(), -1;
        wrote = true;
      }
      if (wrote)
        if (Status e = events.Flush(); !e.ok()) return *error = e.message(), -1;
    }
    if (!roots.empty() && (last_root < 0 || t - last_root >= opts.root_interval)) {
      const double dt = last_root < 0 ? opts.root_interval : t - last_root;
      for (auto& r : roots)
        if (Status e = r->Update(std::min(t, rt.metrics_end), dt, tick); !e.ok()) return *error = e.message(), -1;
      last_root = t;
      ++tick;
    }
    if (g_signal) {
      (void)events.Close();   // interrupted: the exit code says so
      return g_signal == SIGINT ? 130 : 143;
    }
    if (opts.max_seconds > 0 && t - now >= opts.max_seconds) {
      (void)events.Close();
      return 143;
    }
    if (next_seg >= segs.size() && t >= end) break;
    double wake = t + std::min(opts.root_interval, std::max(0.01, opts.step_seconds / 2));
    if (next_seg < segs.size()) wake = std::min(wake, segs[next_seg].at);
    std::this_thread::sleep_for(std::chrono::duration<double>(std::max(0.0, wake - WallNow())));
  }
  if (Status e = events.Close(); !e.ok()) return *error = e.message(), -1;
  switch (rt.outcome) {
    case Outcome::kCompleted: return 0;
    case Outcome::kCancelled: return 143;
    default: return rt.exit_code;
  }
}

}  // namespace mt::launch::sim
