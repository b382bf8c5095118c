// Training scalars for the TSDB, from the job's newest TFEvent file or, while there is
// none, from the `completed step:` lines of the job log.
//
// A scrape can carry one sample per series, so steps are "dripped": each scrape emits
// the oldest complete step not yet emitted, with its own wall time as an explicit
// timestamp (tb_<tag> gauges, tb_step, tb_metrics_plugin_staleness_fill 0). When more
// than `max_backlog` complete steps are waiting, the oldest are skipped so the series
// stay current. While no new step arrives the last one is repeated unchanged (Prometheus
// ignores a repeated identical sample), and every `fill_period` a copy stamped "now" with
// staleness_fill 1 keeps the series from going stale in instant queries. Steps older
// than an hour are dropped (Prometheus would reject them).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exporter/collector.h"
#include "exporter/tfrecord_reader.h"

namespace mt::exporter {

struct TrainingOptions {
  std::string tfevents;  // file or directory; empty: search `job_dir`
  std::string job_dir;
  std::string job_log;   // empty: derived from job_dir
  std::string host;
  double since_epoch = 0;  // event files created before this are not followed
  size_t max_backlog = 8;
  double fill_period_s = 150;
  double max_age_s = 3600;
  std::function<double()> now;  // seconds since the epoch; default: system clock
};

// The job log of a job dir: <dir>/log, else <parent>/<dir name>.log / .out.
std::string JobLogForDir(const std::string& job_dir);

class TrainingCollector : public Collector {
 public:
  explicit TrainingCollector(TrainingOptions options);
  ~TrainingCollector() override;
  std::string_view name() const override { return "training"; }
  bool Collect(MetricSink& sink) override;

  const std::string& source() const { return source_path_; }  // file being followed
  uint64_t skipped_steps() const { return skipped_steps_; }
  const TfRecordStats* record_stats() const;

 private:
  struct Step {
    double wall_time = 0;
    std::map<std::string, double> values;  // metric name -> value
  };

  void FindSource(double now);
  void ReadEvents();
  void ReadLog(double now);
  void Emit(MetricSink& sink, double now);

  TrainingOptions o_;
  // TFEvent state
  std::unique_ptr<FileSource> events_;
  TfRecordReader reader_;
  uint64_t last_size_ = 0;
  bool grew_ = false;
  // job log state
  int log_fd_ = -1;
  uint64_t log_offset_ = 0;
  bool log_started_ = false;
  bool log_drop_first_ = false;
  std::string log_partial_;
  double last_log_ts_ = 0;

  std::string source_path_;
  double next_search_ = 0;
  double first_search_ = 0;

  std::map<int64_t, Step> pending_;
  std::optional<int64_t> last_step_;
  Step last_emitted_;
  int64_t last_ts_ms_ = 0;
  bool last_was_fill_ = false;
  double last_real_emit_ = 0;  // wall clock of the last real or fill emission
  uint64_t skipped_steps_ = 0;
};

}  // namespace mt::exporter
