#include "tools/shared_store/job_on_store.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>

#include "tools/logs/scan_cache.h"
#include "tools/shared_store/job_labels.h"
#include "tools/logs/step_clock.h"

namespace mt::tools {

std::optional<TsdbWindow> StoreWindow(const JobFiles& job, std::optional<double> start, std::optional<double> end,
                                      std::optional<double> at, SchedulerAnswer& scheduler, const PrometheusClient& store,
                                      std::string* from) {
  if (start && end) {
    *from = "arguments";
    return TsdbWindow{*start, *end};
  }
  if (!job.log.empty()) {
    auto scan = ScanCache::Shared().Get(job.log).data;
    const LogScan& s = scan->scan;
    const int64_t last = s.tail_time != kNoTime ? s.tail_time : s.last_time;
    if (s.first_time != kNoTime && last != kNoTime && last > s.first_time) {
      *from = "job log";
      return TsdbWindow{static_cast<double>(start.value_or(static_cast<double>(s.first_time))),
                        static_cast<double>(end.value_or(static_cast<double>(last)))};
    }
  }
  // A log without time stamps: when the scheduler ran the job (to now while it runs).
  if (const SchedulerJob& s = scheduler.Get(); s.start) {
    *from = "scheduler";
    const double now = static_cast<double>(std::time(nullptr));
    return TsdbWindow{start.value_or(*s.start), end.value_or(s.end.value_or(now))};
  }
  const double now = static_cast<double>(std::time(nullptr));
  if (auto w = WindowFromJobLabels(store, job.id, at.value_or(now), 30 * 86400.0)) {
    *from = "exporter labels";
    return TsdbWindow{start.value_or(w->start), end.value_or(w->end)};
  }
  if (at) {
    *from = "arguments";
    return TsdbWindow{*at - 3600, *at};
  }
  return std::nullopt;
}

std::string ShortHostName(const std::string& h) {
  const bool has_letter = std::any_of(h.begin(), h.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
  return has_letter && h.find(':') == std::string::npos ? h.substr(0, h.find('.')) : h;
}

JobHostsOnStore MatchJobHosts(const JobFiles& job, SchedulerAnswer& scheduler, TsdbContext& ctx) {
  JobHostsOnStore m;
  const JobHosts mine = FindJobHosts(job, scheduler);
  if (mine.hosts.empty()) {
    m.found = HostsFromJobLabels(ctx, job.id);
    if (!m.found.empty()) {
      m.found_by = "exporter labels";
      m.note = "hosts: the " + std::to_string(m.found.size()) +
               " host(s) whose GPU series carry the job's id (dcgm-exporter's hpc_job, AMD's job_id); its log names no "
               "nodes and the scheduler knows none";
      return m;
    }
    m.note = "hosts: every host reporting on this store in the window, not narrowed to the job's nodes "
             "(its log names none — no SLURM_JOB_NODELIST, no NCCL lines — and the scheduler knows none)";
    return m;
  }
  std::map<std::string, std::string> store;   // short name → the store's name
  for (const auto& h : ctx.Hosts()) store.emplace(ShortHostName(h), h);
  std::vector<std::string> absent;
  for (const auto& h : mine.hosts) {
    auto it = store.find(ShortHostName(h));
    if (it == store.end()) absent.push_back(h);
    else m.found.push_back(it->second);
  }
  m.found_by = mine.found_by;
  m.note = "hosts: the job's " + std::to_string(mine.hosts.size()) + " node(s) (" + mine.found_by + "), " +
           std::to_string(m.found.size()) + " of them reporting on this store";
  for (size_t i = 0; i < absent.size() && i < 8; ++i) m.note += (i ? ", " : "; absent: ") + absent[i];
  if (absent.size() > 8) m.note += ", …";
  return m;
}

void ApplyJobHosts(const JobHostsOnStore& m, QueryAnswer* out) {
  if (!m.found_by.empty()) {
    out->hosts.assign(m.found.begin(), m.found.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(m.found.size(), 64)));
    out->hosts_total = m.found.size() > 64 ? std::optional<int64_t>(static_cast<int64_t>(m.found.size())) : std::nullopt;
    out->tsdb.hosts_source = m.found_by;
  }
  if (!out->hosts.empty() || !m.found_by.empty()) out->notes.push_back(m.note);
}

void SetStepClockFromLog(const JobFiles& job, const TsdbWindow& window, const std::string& window_from,
                         SchedulerAnswer& scheduler, TsdbContext& ctx, std::vector<std::string>* notes) {
  if (job.log.empty()) return;
  auto scan = ScanCache::Shared().Get(job.log).data;
  const LogScan& s = scan->scan;
  // The job's start and end, best source first. The window is the caller's view, which may
  // be narrower than the job: its start is the job's only when nothing better is known.
  std::optional<double> start, end;
  std::string label;
  if (const SchedulerJob& sj = scheduler.Get(); sj.start) {
    start = sj.start;
    end = sj.end;
    label = "the scheduler";
  } else if (s.first_time != kNoTime && !s.steps.empty() && s.first_time_line < s.steps.front().first_line) {
    start = static_cast<double>(s.first_time);   // a stamp before training (a launcher's `date`)
    label = "the log's first time stamp";
  } else {
    start = window.start;
    label = "the window's start (" + window_from + "), taken as the job's";
  }
  if (!end) end = window.end;
  StepClock clock = StepClockFromLog(s, start, end, label);
  if (clock.steps.empty()) return;
  std::vector<TsdbPoint> points;
  for (const auto& st : clock.steps) points.push_back({st.time, static_cast<double>(st.step)});
  ctx.SetStepClock(std::move(points), clock.source);
  notes->push_back("step times: from " + clock.source);
}

}  // namespace mt::tools
