#include "launcher/sim/job_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ctime>

#include "base/atomic_file.h"
#include "launcher/sim/job_log.h"
#include "launcher/sim/metrics_model.h"
#include "launcher/sim/noise.h"
#include "launcher/sim/tb_scalars.h"
#include "launcher/sim/profile_trace.h"
#include "launcher/sim/tfevents_writer.h"
#include "launcher/sim/timeline.h"

namespace mt::launch::sim {
namespace fs = std::filesystem;
using base::Errc;
using base::Status;
namespace {

std::string Stamp(double t, const char* fmt) {
  std::time_t secs = static_cast<std::time_t>(std::floor(t));
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, fmt, &tm);
  return buf;
}

void SetMtime(const fs::path& p, double t) {
  struct timespec ts[2];
  ts[0].tv_sec = ts[1].tv_sec = static_cast<time_t>(std::floor(t));
  ts[0].tv_nsec = ts[1].tv_nsec = static_cast<long>((t - std::floor(t)) * 1e9);
  utimensat(AT_FDCWD, p.c_str(), ts, AT_SYMLINK_NOFOLLOW);
}

Status WriteEvents(const Scenario& s, const Timeline& tl, const fs::path& dir, fs::path* out) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status(Errc::kIo, "cannot create " + dir.string() + ": " + ec.message());
  const double created = std::floor(tl.memstats);
  *out = dir / EventFileName(static_cast<int64_t>(created), s.hosts[0]);
  TfEventWriter w;
  if (Status e = w.Open(*out, created); !e.ok()) return e;
  for (const auto& r : tl.steps) {
    for (const auto& [tag, v] : StepScalars(s, r))
      if (Status e = w.AddScalar(StepWallTime(r), r.step, tag, static_cast<float>(v)); !e.ok()) return e;
  }
  if (Status e = w.Close(); !e.ok()) return e;
  if (!tl.steps.empty()) SetMtime(*out, StepWallTime(tl.steps.back()));
  return Status::Ok();
}

std::string PrometheusLog(const Scenario& s, const Timeline& tl) {
  const std::string t0 = Stamp(tl.train_begin + 20, "%Y-%m-%dT%H:%M:%S.000Z");
  std::string o;
  o += "ts=" + t0 + " caller=main.go:556 level=info msg=\"Starting Prometheus Server\" mode=server version=\"(version=2.48.1)\"\n";
  o += "ts=" + t0 + " caller=web.go:566 level=info component=web msg=\"Start listening for connections\" address=127.0.0.1:9190\n";
  o += "ts=" + t0 + " caller=main.go:1009 level=info msg=\"Server is ready to receive web requests.\"\n";
  o += "[" + Stamp(tl.train_begin + 20, "%Y-%m-%dT%H:%M:%SZ") + "] [Prometheus] Started on port 9190 (ray: " +
       std::to_string(s.hosts.size()) + " targets; node_hw: " + std::to_string(s.hosts.size()) + " targets)\n";
  if (tl.has_summary) {
    const std::string t1 = Stamp(tl.job_end, "%Y-%m-%dT%H:%M:%S.000Z");
    o += "ts=" + t1 + " caller=main.go:856 level=warn msg=\"Received SIGTERM, exiting gracefully...\"\n";
    o += "ts=" + t1 + " caller=main.go:1159 level=info msg=\"See you next time!\"\n";
  }
  return o;
}

std::string ScrapeConfig(const Scenario& s) {
  std::string o = "global:\n  scrape_interval: 5s\nscrape_configs:\n  - job_name: ray\n    static_configs:\n      - targets: [";
  for (size_t i = 0; i < s.hosts.size(); ++i) o += (i ? ", " : "") + ("'" + s.hosts[i] + ":55080'");
  o += "]\n  - job_name: node_hw\n    scrape_interval: 10s\n    scrape_timeout: 8s\n    static_configs:\n      - targets: [";
  for (size_t i = 0; i < s.hosts.size(); ++i) o += (i ? ", " : "") + ("'" + s.hosts[i] + ":9400'");
  o += "]\n";
  return o;
}

std::string ExporterLog(const Scenario& s, const Timeline& tl, size_t host) {
  std::string o;
  o += "[" + Stamp(tl.metrics_start - 2, "%Y-%m-%dT%H:%M:%SZ") + "] [metrics_exporter] listening on :9400, interval 10s, host " + s.hosts[host] + "\n";
  o += "[" + Stamp(tl.metrics_start - 2, "%Y-%m-%dT%H:%M:%SZ") + "] [metrics_exporter] plugins: gpu_metrics_plugin.sh host_metrics_plugin.sh tb_metrics_plugin.sh\n";
  if (host != 0)
    o += "[" + Stamp(tl.metrics_start, "%Y-%m-%dT%H:%M:%SZ") + "] [metrics_exporter] tb_metrics_plugin.sh exited 99 (NODE_RANK=" + std::to_string(host) + "); skipping it from now on\n";
  if (tl.has_summary) o += "[" + Stamp(tl.job_end, "%Y-%m-%dT%H:%M:%SZ") + "] [metrics_exporter] received SIGTERM, exiting\n";
  return o;
}

// Rank 0's lines without the srun label: what Ray's worker log holds for the head node.
std::string HeadWorkerLog(const std::string& log, int ntasks) {
  const std::string label = RankLabel(0, ntasks);
  std::string out;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t nl = log.find('\n', pos);
    if (nl == std::string::npos) nl = log.size();
    if (log.compare(pos, label.size(), label) == 0) out.append(log, pos + label.size(), nl + 1 - pos - label.size());
    pos = nl + 1;
  }
  return out;
}

Status Artifact(const Scenario& s, const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir / "configs", ec);
  if (ec) return Status(Errc::kIo, "cannot create " + dir.string() + ": " + ec.message());
  std::string cmd = "./submit.sh " + s.model + (s.alias.empty() ? "" : ":" + s.alias) +
                    (s.exp_tag.empty() ? "" : ":" + s.exp_tag) + " -N " + std::to_string(s.hosts.size()) + " --";
  for (const auto& a : s.passthrough) cmd += " " + a;
  if (Status e = base::WriteFileAtomic(dir / "submit_cmd.txt", std::string(s.ray ? "RAY=1 " : "") + cmd + "\n"); !e.ok()) return e;
  if (Status e = base::WriteFileAtomic(dir / "git_summary.txt",
                                      "[BRANCH]\nmain\n[LAST COMMIT]\nc0ffee1 Merge pull request #127 from gh/CODEOWNERS\n"
                                      "[CHANGES --name-status]\n[UNTRACKED]\n");
      !e.ok())
    return e;
  std::string yml = "# " + s.model + " (GPU overrides, as snapshotted at submit time)\nbase_config: base.yml\nhardware: gpu\n"
                    "attention: cudnn_flash_te\nuse_iota_embed: True\nshardy: false\nper_device_batch_size: " +
                    std::to_string(s.per_device_batch_size) + "\nmax_target_length: " + std::to_string(s.max_target_length) + "\n";
  return base::WriteFileAtomic(dir / "configs" / (s.model + ".gpu.yml"), yml);
}

}  // namespace

Status GenerateJob(const Scenario& s, const fs::path& workspace, const GenerateOptions& opts,
                        GenerateResult* result) {
  std::error_code ec;
  if (!fs::is_directory(workspace, ec)) return Status(Errc::kNotDirectory, "workspace " + workspace.string() + " is not a directory");
  const std::string dir_name = s.JobDirName();
  const fs::path final_dir = workspace / dir_name;
  const fs::path final_log = workspace / (dir_name + ".log");
  if (fs::exists(fs::symlink_status(final_dir)) || fs::exists(fs::symlink_status(final_log)))
    return Status(Errc::kConflict, "job " + s.job_id + " already exists in " + workspace.string() + " (" + dir_name + ")");
  const Timeline tl = BuildTimeline(s);
  const double submit = tl.job_start - 20;
  char hex[8];
  std::snprintf(hex, sizeof hex, "%04x", static_cast<unsigned>(Mix64(s.seed + 77) & 0xFFFF));
  const std::string artifact_name = "artifact_" + Stamp(submit, "%Y%m%d_%H%M%S") + "_" + hex;
  const fs::path final_artifact = workspace / ".artifacts" / artifact_name;
  if (fs::exists(final_artifact)) return Status(Errc::kConflict, "artifact " + final_artifact.string() + " already exists");

  const fs::path tmp = workspace / (".mt-simtrain-" + s.job_id + "-" + std::to_string(getpid()) + ".partial");
  fs::remove_all(tmp, ec);
  auto fail = [&](const Status& e) {
    std::error_code ignore;
    fs::remove_all(tmp, ignore);
    return e;
  };
  const fs::path job = tmp / "job";
  fs::create_directories(job / "prometheus", ec);
  if (!ec) fs::create_directories(job / "metrics_exporter", ec);
  if (ec) return fail(Status(Errc::kIo, "cannot create " + job.string() + ": " + ec.message()));

  // 1. the log
  LogPaths paths;
  paths.artifact_dir = "/shared/maxtext-slurm/outputs/.artifacts/" + artifact_name;
  paths.container_out = "/outputs/" + dir_name;
  const std::string log = RenderJobLog(s, tl, paths);
  if (Status e = base::WriteFileAtomic(tmp / "log", log); !e.ok()) return fail(e);

  // 2. the TensorBoard event file
  fs::path events;
  if (Status e = WriteEvents(s, tl, job / s.RunName() / "tensorboard" / s.RunName(), &events); !e.ok())
    return fail(e);

  // 2b. the profiler trace of node 0 (jax.profiler writes into the TensorBoard directory)
  fs::path profile;
  if (Status e = WriteProfileTrace(s, tl, job / s.RunName() / "tensorboard", &profile); !e.ok()) return fail(e);

  // 3. the TSDB: OpenMetrics windows -> promtool -> blocks
  MetricsModel model(s, tl);
  const fs::path om_dir = tmp / "openmetrics";
  fs::create_directories(om_dir, ec);
  OpenMetricsStats stats;
  {
    PromtoolOptions popts = opts.promtool;
    popts.remove_inputs = !opts.keep_openmetrics;
    BlockBuilder blocks(job / "prometheus", popts);
    auto on_file = [&](const fs::path& f) { return opts.with_tsdb ? blocks.Submit(f) : Status::Ok(); };
    const Status e = WriteOpenMetricsWindows(model, om_dir, on_file, &stats);
    const Status b = blocks.Finish();
    if (!e.ok()) return fail(e);
    if (!b.ok()) return fail(b);
  }
  if (opts.keep_openmetrics) {
    fs::rename(om_dir, job / "prometheus-openmetrics", ec);
    if (ec) return fail(Status(Errc::kIo, "cannot keep OpenMetrics files: " + ec.message()));
  }
  if (Status e = base::WriteFileAtomic(job / "prometheus" / "prometheus.log", PrometheusLog(s, tl)); !e.ok()) return fail(e);
  if (Status e = base::WriteFileAtomic(job / "prometheus" / "ray_prometheus.yml", ScrapeConfig(s)); !e.ok()) return fail(e);

  // 4. exporter and Ray logs
  for (size_t h = 0; h < s.hosts.size(); ++h)
    if (Status e = base::WriteFileAtomic(job / "metrics_exporter" / (s.hosts[h] + ".log"), ExporterLog(s, tl, h)); !e.ok())
      return fail(e);
  if (s.ray) {
    const fs::path ray = job / "ray_logs" / s.hosts[0];
    fs::create_directories(ray, ec);
    if (ec) return fail(Status(Errc::kIo, "cannot create " + ray.string()));
    const std::string pid = std::to_string(200000 + Mix64(s.seed + 5) % 700000);
    if (Status e = base::WriteFileAtomic(ray / ("worker-" + std::string(hex) + "-01000000-" + pid + ".out"),
                                        HeadWorkerLog(log, static_cast<int>(s.hosts.size())));
        !e.ok())
      return fail(e);
  }

  // 5. artifact snapshot and the two symlinks the tools follow
  if (Status e = Artifact(s, tmp / "artifact"); !e.ok()) return fail(e);
  fs::create_directory_symlink("../.artifacts/" + artifact_name, job / "artifact", ec);
  if (!ec) fs::create_symlink("../" + dir_name + ".log", job / "log", ec);
  if (ec) return fail(Status(Errc::kIo, "cannot create symlinks: " + ec.message()));

  // 6. move into place: artifact, then log, then the directory (the directory last, so a
  //    reader that finds the job dir always finds its log).
  fs::create_directories(workspace / ".artifacts", ec);
  fs::rename(tmp / "artifact", final_artifact, ec);
  if (ec) return fail(Status(Errc::kIo, "cannot move artifact into place: " + ec.message()));
  fs::rename(tmp / "log", final_log, ec);
  if (ec) {
    fs::remove_all(final_artifact, ec);
    return fail(Status(Errc::kIo, "cannot move log into place"));
  }
  fs::rename(job, final_dir, ec);
  if (ec) {
    std::error_code ignore;
    fs::remove(final_log, ignore);
    fs::remove_all(final_artifact, ignore);
    return fail(Status(Errc::kIo, "cannot move job directory into place: " + ec.message()));
  }
  fs::remove_all(tmp, ec);
  SetMtime(final_log, tl.job_end);
  if (result) {
    result->log_path = final_log;
    result->job_dir = final_dir;
    result->event_file = final_dir / events.lexically_relative(job);
    result->metrics = stats;
  }
  return Status::Ok();
}

}  // namespace mt::launch::sim
