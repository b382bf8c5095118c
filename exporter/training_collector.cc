#include "exporter/training_collector.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>

#include "exporter/event_file_finder.h"
#include "exporter/log.h"
#include "exporter/step_line.h"
#include "exporter/tfevent.h"

namespace mt::exporter {

namespace {

constexpr uint64_t kLogTail = 1u << 20;       // first read of a log: its last 1 MiB
constexpr size_t kLogReadPerPoll = 4u << 20;  // bound the work of one scrape

double SystemNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool IsFile(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::string JobLogForDir(const std::string& job_dir) {
  std::string dir = job_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (IsFile(dir + "/log")) return dir + "/log";
  for (const char* ext : {".log", ".out"}) {
    if (IsFile(dir + ext)) return dir + ext;
  }
  return "";
}

TrainingCollector::TrainingCollector(TrainingOptions options) : o_(std::move(options)) {
  if (!o_.now) o_.now = SystemNow;
}

TrainingCollector::~TrainingCollector() {
  if (log_fd_ >= 0) ::close(log_fd_);
}

const TfRecordStats* TrainingCollector::record_stats() const {
  return events_ ? &reader_.stats() : nullptr;
}

void TrainingCollector::FindSource(double now) {
  if (events_ && !events_->Deleted()) return;  // a followed file stays locked until deleted
  if (events_) {
    Log("TFEvent file " + source_path_ + " was deleted; searching again");
    events_.reset();
    reader_ = TfRecordReader();
    source_path_.clear();
    next_search_ = 0;
  }
  if (now < next_search_) return;
  if (first_search_ == 0) first_search_ = now;
  // Search often while the job starts, then back off.
  next_search_ = now + (now - first_search_ < 300 ? 2.0 : 30.0);
  std::string root = !o_.tfevents.empty() ? o_.tfevents : o_.job_dir;
  if (root.empty()) return;
  auto found = FindNewestEventFile(root, o_.host, std::floor(o_.since_epoch));
  if (!found) return;
  auto src = std::make_unique<FileSource>(*found);
  if (!src->ok()) return;
  events_ = std::move(src);
  source_path_ = *found;
  last_size_ = 0;
  Log("following TFEvent file " + source_path_);
}

void TrainingCollector::ReadEvents() {
  uint64_t size = events_->Size();
  grew_ = size != last_size_;
  last_size_ = size;
  if (!grew_) return;
  reader_.Poll(*events_, [this](std::string_view record) {
    TfEvent ev;
    if (!DecodeTfEvent(record, &ev) || ev.scalars.empty()) return;
    if (last_step_ && ev.step <= *last_step_) return;  // already emitted (or skipped)
    Step& s = pending_[ev.step];
    s.wall_time = std::max(s.wall_time, ev.wall_time);
    for (auto& [tag, value] : ev.scalars) s.values.emplace(TbMetricName(tag), value);
  });
}

void TrainingCollector::ReadLog(double now) {
  grew_ = false;  // a log line carries all of its step's values: nothing to wait for
  if (log_fd_ < 0) {
    std::string path = !o_.job_log.empty() ? o_.job_log : (o_.job_dir.empty() ? "" : JobLogForDir(o_.job_dir));
    if (path.empty()) return;
    log_fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (log_fd_ < 0) return;
    source_path_ = path;
    Log("no TFEvent file yet; reading steps from job log " + path);
  }
  struct stat st;
  if (::fstat(log_fd_, &st) != 0) return;
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (!log_started_) {
    log_started_ = true;
    if (size > kLogTail) {
      log_offset_ = size - kLogTail;
      log_drop_first_ = true;  // we start mid-line
    }
  }
  if (size < log_offset_) {  // truncated
    log_offset_ = 0;
    log_partial_.clear();
    log_drop_first_ = false;
  }
  if (size == log_offset_) return;
  size_t want = static_cast<size_t>(std::min<uint64_t>(size - log_offset_, kLogReadPerPoll));
  std::string buf(want, '\0');
  ssize_t n = ::pread(log_fd_, buf.data(), want, static_cast<off_t>(log_offset_));
  if (n <= 0) return;
  buf.resize(static_cast<size_t>(n));
  log_offset_ += static_cast<uint64_t>(n);
  std::string text = log_partial_ + buf;
  log_partial_.clear();
  size_t start = 0;
  if (log_drop_first_) {
    size_t nl = text.find('\n');
    if (nl == std::string::npos) return;  // still inside the first partial line
    start = nl + 1;
    log_drop_first_ = false;
  }
  // Each step observed now gets a distinct, increasing timestamp: the log has no clock.
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    auto s = ParseStepLine(std::string_view(text).substr(start, nl - start));
    if (!s || s->rank > 0) continue;  // rank 0 (or unprefixed) speaks for the job
    if (last_step_ && s->step <= *last_step_) continue;
    if (pending_.count(s->step)) continue;
    double ts = std::max(now, last_log_ts_ + 0.001);
    last_log_ts_ = ts;
    Step& st2 = pending_[s->step];
    st2.wall_time = ts;
    st2.values["tb_perf_step_time_seconds"] = s->seconds;
    if (s->tokens_per_sec) st2.values["tb_perf_per_device_tokens_per_sec"] = *s->tokens_per_sec;
    if (s->loss) st2.values["tb_learning_loss"] = *s->loss;
  }
  if (start < text.size()) log_partial_ = text.substr(start);
}

void TrainingCollector::Emit(MetricSink& sink, double now) {
  // Drop what Prometheus would refuse, and keep the backlog short so the series stay
  // current. The newest step counts as complete only once its source stopped growing
  // (its other scalars may still be on their way).
  while (!pending_.empty() && pending_.begin()->second.wall_time < now - o_.max_age_s) {
    last_step_ = pending_.begin()->first;
    pending_.erase(pending_.begin());
    ++skipped_steps_;
  }
  size_t complete = pending_.size() - ((grew_ && !pending_.empty()) ? 1 : 0);
  while (complete > o_.max_backlog) {
    last_step_ = pending_.begin()->first;
    pending_.erase(pending_.begin());
    --complete;
    ++skipped_steps_;
  }
  if (complete > 0) {
    auto it = pending_.begin();
    last_step_ = it->first;
    last_emitted_ = std::move(it->second);
    pending_.erase(it);
    last_emitted_.values["tb_step"] = static_cast<double>(*last_step_);
    int64_t ts = static_cast<int64_t>(std::llround(last_emitted_.wall_time * 1000));
    last_ts_ms_ = std::max(ts, last_ts_ms_ + 1);
    last_was_fill_ = false;
    last_real_emit_ = now;
  } else if (last_step_ && !last_emitted_.values.empty() && now - last_real_emit_ >= o_.fill_period_s) {
    // Idle: a synthetic copy stamped now (never before the previous sample).
    last_ts_ms_ = std::max(static_cast<int64_t>(std::llround(now * 1000)), last_ts_ms_ + 1);
    last_was_fill_ = true;
    last_real_emit_ = now;
  }
  if (last_emitted_.values.empty()) return;
  if (last_ts_ms_ < static_cast<int64_t>((now - o_.max_age_s) * 1000)) return;  // too old to matter
  for (const auto& [name, value] : last_emitted_.values) {
    sink.Gauge(name, name == "tb_step" ? "Training step of the tb_* samples." : "TensorBoard scalar.", {}, value,
               last_ts_ms_);
  }
  sink.Gauge("tb_metrics_plugin_staleness_fill", "1 if the tb_* samples are a synthetic repeat, 0 for real data.",
             {}, last_was_fill_ ? 1.0 : 0.0, last_ts_ms_);
}

bool TrainingCollector::Collect(MetricSink& sink) {
  double now = o_.now();
  FindSource(now);
  if (events_) {
    if (log_fd_ >= 0) {  // an event file supersedes the log fallback
      ::close(log_fd_);
      log_fd_ = -1;
    }
    ReadEvents();
  } else {
    ReadLog(now);
  }
  Emit(sink, now);
  return true;
}

}  // namespace mt::exporter
