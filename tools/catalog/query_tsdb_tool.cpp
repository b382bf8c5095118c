#include "tools/catalog/query_tsdb_tool.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "mcp/call_context.h"
#include "tools/catalog/answer_budget.h"
#include "tools/catalog/triage_log_tool.h"
#include "tools/common/iso_time.h"
#include "tools/logs/job_hosts.h"
#include "tools/shared_store/job_on_store.h"
#include "tools/tsdb/prometheus_client.h"
#include "tools/tsdb/tsdb_attribution.h"
#include "tools/tsdb/tsdb_modes.h"

namespace mt::tools {
namespace {

constexpr const char* kDescription =
    "Query a job's Prometheus TSDB (GPU, host, network and training metrics of every node) and get "
    "evidence, not raw data: a few hundred tokens with per-host numbers, outliers and a one-sentence "
    "verdict. Works after the job ended (starts a private Prometheus on a copy of the job's blocks) or "
    "while it runs. Modes: `discover` (metric families, hosts, time range, checks the TSDB is the job's); "
    "`promql` (any query; instant at `time` or range with start/end/step; answered as per-series "
    "min/mean/max/last, host ranking, outliers and at most `points` raw points); `playbook` (hang, "
    "heartbeat, host_oom, node_failure, gpu_health, network_health, training_stability, or auto = the "
    "one for triage's class; the window defaults from triage: hang time, heartbeat-stop time); "
    "`correlate` (at a time or a training step: every metric family, hosts ranked by deviation from the "
    "others and from their own baseline). Run triage_log first; use discover when unsure of names.";

constexpr size_t kDefaultTokens = 2000;
constexpr size_t kFullTokens = 20000;

// Times outside this window are refused rather than passed on: 1e308 s would overflow the
// time arithmetic downstream (year −292277022657 in an answer) and no training job's TSDB
// holds data before 2000 or after 2100.
constexpr double kEarliestTime = 946684800;    // 2000-01-01T00:00:00Z
constexpr double kLatestTime = 4102444800;     // 2100-01-01T00:00:00Z

std::optional<double> ParseTime(const std::optional<Json>& arg, const char* key) {
  if (!arg) return std::nullopt;
  const Json& v = *arg;
  double t = 0;
  std::string shown;
  if (v.is_number()) {
    t = v.get<double>();
    shown = v.dump();
    if (t > 1e11) t /= 1000;   // milliseconds
  } else {
    shown = v.get<std::string>();
    if (!shown.empty() && shown.find_first_not_of("0123456789.") == std::string::npos) {
      char* end = nullptr;
      t = std::strtod(shown.c_str(), &end);   // no exception on overflow: HUGE_VAL is refused below
      if (*end != '\0') throw std::invalid_argument(std::string(key) + ": '" + shown + "' is not a number of Unix seconds");
      if (t > 1e11) t /= 1000;
    } else {
      auto iso = ParseIso8601(shown);
      if (!iso) throw std::invalid_argument(std::string(key) + ": '" + shown + "' is not an ISO-8601 time or Unix seconds");
      t = static_cast<double>(*iso);
    }
  }
  if (!(t >= kEarliestTime && t <= kLatestTime))
    throw std::invalid_argument(std::string(key) + ": " + shown.substr(0, 40) +
                                " is outside 2000-01-01..2100-01-01 (give ISO-8601 or Unix seconds)");
  return t;
}

// Bounds the answer: drops detail in a fixed order until it fits, and says what went.
void Bound(Json& out, size_t max_tokens) {
  AnswerBudget budget(out, max_tokens);
  if (!budget.over_at_start()) return;
  auto tokens_over = [&budget] { return budget.over(); };
  auto shrink_array = [](Json& a, size_t n) {
    if (a.is_array() && a.size() > n) a.erase(a.begin() + static_cast<std::ptrdiff_t>(n), a.end());
  };
  if (out["outliers"].size() > 5) {
    shrink_array(out["outliers"], 5);
    budget.Dropped("outliers beyond 5");
  }
  for (const char* k : {"series", "families", "host_ranking"})
    if (tokens_over() && out.contains(k) && out[k].size() > 5) {
      shrink_array(out[k], 5);
      budget.Dropped(std::string(k) + " beyond 5");
    }
  if (tokens_over() && out.contains("points")) {
    out.erase("points");
    budget.Dropped("raw points");
  }
  // Evidence arrays inside findings, then whole evidence objects, largest first.
  for (size_t cap : {8u, 4u}) {
    if (!tokens_over()) break;
    for (auto& f : out["findings"])
      if (f["evidence"].is_object())
        for (auto& [k, v] : f["evidence"].items())
          if (v.is_array() && v.size() > cap) {
            shrink_array(v, cap);
            budget.Dropped("evidence." + k + " beyond " + std::to_string(cap));
          }
  }
  while (tokens_over()) {
    size_t best = 0, best_size = 0;
    for (size_t i = 0; i < out["findings"].size(); ++i) {
      size_t s = out["findings"][i]["evidence"].dump().size();
      if (s > best_size) best = i, best_size = s;
    }
    if (best_size <= 2) break;
    out["findings"][best]["evidence"] = "omitted (detail: full shows it)";
    budget.Dropped("evidence of '" + out["findings"][best]["rule"].get<std::string>().substr(0, 40) + "'");
  }
  budget.Finish("call again with detail: full, or a narrower query, for the rest");
}

// What the mode needs, from the arguments; checked before any TSDB work.
struct QueryPlan {
  PromqlRequest pq;
  std::string playbook;
  std::optional<TsdbWindow> window;
  std::optional<double> at;
  std::optional<long> at_step;
};

QueryPlan PlanQuery(const QueryTsdbInput& in, const TsdbWindow& data) {
  QueryPlan p;
  auto start = ParseTime(in.start, "start"), end = ParseTime(in.end, "end");
  if (in.mode == "promql") {
    if (!in.query) throw std::invalid_argument("mode promql needs `query`");
    p.pq.query = *in.query;
    p.pq.start = start;
    p.pq.end = end;
    p.pq.step = in.step;
    p.pq.time = ParseTime(in.time, "time");
    p.pq.points = static_cast<int>(in.points);
  } else if (in.mode == "playbook") {
    p.playbook = in.playbook.value_or("auto");
    if (start || end) p.window = TsdbWindow{start.value_or(data.start), end.value_or(data.end)};
    if (p.window && p.window->end <= p.window->start) throw std::invalid_argument("end must be after start");
  } else if (in.mode == "correlate") {
    p.at = ParseTime(in.time, "time");
    if (in.training_step) p.at_step = static_cast<long>(*in.training_step);
    if (!p.at && !p.at_step) throw std::invalid_argument("mode correlate needs `time` or `training_step`");
  }
  return p;
}

// Triage (cached scan) for default windows, liveness and the symptom, judged at `judge_at`
// (the end of the data) unless `now` is given, so that the same files always give the same
// answer; with neither, the clock decides.
Json TriageForQuery(const JobFiles& job, const QueryTsdbInput& in, std::optional<double> judge_at) {
  if (job.log.empty()) return Json();
  Json targs = Json::object();
  if (in.now) targs["now"] = *in.now;
  else if (judge_at) targs["now"] = FormatIso8601(static_cast<int64_t>(*judge_at));
  try {
    return TriageLogStructured(job, targs);
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::exception&) {
    return Json();   // an unreadable log only costs the default windows and the symptom
  }
}

// A running Prometheus also holds samples not yet compacted into blocks: its head.
void AddLiveHead(const PrometheusClient& client, const TsdbLayout& layout, TsdbWindow* data) {
  Json head = client.TsdbStatus().value("headStats", Json::object());
  double head_min = head.value("minTime", 0.0) / 1000.0, head_max = head.value("maxTime", 0.0) / 1000.0;
  if (head_max > head_min && head_min > 0) {
    data->start = layout.blocks.empty() ? head_min : std::min(data->start, head_min);
    data->end = layout.blocks.empty() ? head_max : std::max(data->end, head_max);
  }
}

// Runs the mode; playbook auto first attributes (its family picks the playbook) and fills
// the answer's attribution part.
ModeResult RunMode(TsdbContext& ctx, const std::string& mode, QueryPlan& plan, const Json& triage, QueryAnswer* answer) {
  if (mode == "discover") return RunDiscover(ctx, triage);
  if (mode == "promql") return RunPromql(ctx, plan.pq);
  if (mode == "playbook") {
    if (plan.playbook == "auto") {
      // Attribution runs the cheap check of every family; its family picks the playbook.
      Attribution attribution = Attribute(ctx, triage);
      auto choice = ChooseAutoPlaybook(attribution, triage.is_object() ? triage.value("class", "") : "");
      plan.playbook = choice.playbook;
      AddAttribution(attribution, ctx, answer);
      answer->attribution->playbook_chosen_because = choice.because;
    }
    answer->playbook = plan.playbook;
    return RunPlaybook(ctx, plan.playbook, triage, plan.window);
  }
  double t = plan.at.value_or(0);
  if (plan.at_step) {
    auto ts = ctx.TimeOfStep(*plan.at_step);
    if (!ts) throw std::invalid_argument("training step " + std::to_string(*plan.at_step) + " is not in the TSDB's tb_step series");
    t = *ts;
  }
  return RunCorrelate(ctx, t, plan.at_step);
}

// The mode's own members (ModeResult::extra) into the answer, each checked against its type.
void AddModeExtras(const Json& extra, QueryAnswer* out) {
  for (const auto& [k, v] : extra.items()) {
    const std::string what = "query_tsdb's " + k;
    if (k == "families") out->families = mcp::DecodeExact<std::vector<MetricFamily>>(v, what);
    else if (k == "metric_count") out->metric_count = v.get<int64_t>();
    else if (k == "up_at_end") out->up_at_end = mcp::DecodeExact<std::map<std::string, double>>(v, what);
    else if (k == "exporters") out->exporters = mcp::DecodeExact<std::vector<ExporterAnswer>>(v, what);
    else if (k == "series") out->series = mcp::DecodeExact<std::vector<SeriesSummary>>(v, what);
    else if (k == "series_total") out->series_total = v.get<int64_t>();
    else if (k == "samples_total") out->samples_total = v.get<int64_t>();
    else if (k == "host_ranking") out->host_ranking = mcp::DecodeExact<std::vector<HostValue>>(v, what);
    else if (k == "points") out->points = mcp::DecodeExact<RawPoints>(v, what);
    else if (k == "step_seconds") out->step_seconds = v.get<double>();
    else throw std::logic_error(what + " is not a member of the answer's type (tools/tsdb/query_answer.h)");
  }
}

// The answer's common part from what the mode found (the tsdb part is the caller's).
void FillFromMode(const JobFiles& job, const QueryTsdbInput& in, const ModeResult& r, TsdbContext& ctx, QueryAnswer* out) {
  out->mode = in.mode;
  out->job = job.id.empty() ? job.name : job.id;
  out->window = QueryWindow{IsoTime(r.window.start), IsoTime(r.window.end)};
  const auto& hs = ctx.Hosts();
  for (size_t i = 0; i < hs.size() && i < 64; ++i) out->hosts.push_back(hs[i]);
  if (hs.size() > 64) out->hosts_total = static_cast<int64_t>(hs.size());
  out->findings = mcp::DecodeExact<std::vector<QueryFinding>>(r.findings, "query_tsdb's findings");
  out->outliers = mcp::DecodeExact<std::vector<QueryOutlier>>(r.outliers, "query_tsdb's outliers");
  out->verdict = r.verdict;
  out->notes = r.notes;
  AddModeExtras(r.extra, out);
  out->queries = ctx.queries();
}

// playbook auto on a shared store: the attribution (family, culprits, the checks with the
// concrete series each read). The named playbooks read mt's own metric names, so their
// findings are not run here; the answer says which one to run where.
ModeResult RemoteAttribution(TsdbContext& ctx, const Json& triage, QueryAnswer* answer) {
  Attribution a = Attribute(ctx, triage);
  auto choice = ChooseAutoPlaybook(a, triage.is_object() ? triage.value("class", "") : "");
  AddAttribution(a, ctx, answer);
  answer->attribution->playbook_chosen_because = choice.because;
  ModeResult r;
  r.window = ctx.data();
  std::string culprits;
  for (size_t i = 0; i < a.culprits.size() && i < 8; ++i) culprits += (i ? ", " : "") + a.culprits[i].host;
  if (a.culprits.size() > 8) culprits += ", …";
  r.verdict = a.family + (culprits.empty() ? "" : " on " + culprits) + ": " + a.why;
  for (const auto& c : a.checks) {
    Json evidence = {{"signal", c.signal}, {"hosts", c.hosts}};
    if (!c.missing.empty()) evidence["missing"] = c.missing;
    r.findings.push_back({{"rule", "attribution: " + c.family}, {"verdict", c.verdict}, {"evidence", std::move(evidence)}});
  }
  r.notes.push_back("store vocabulary: " + ctx.Signals().vocabulary + "; the " + choice.playbook +
                    " playbook's own findings read mt's metric names: run it on the job's TSDB, or query the series "
                    "named in attribution.checks with mode promql");
  return r;
}

// query_tsdb on a configured Prometheus-compatible endpoint. Discover and promql read the
// store as it is; the other modes see only the job's hosts, with its steps placed in time by
// its log. On a store of third-party exporters, playbook auto attributes through their names
// (store_signals.h); correlate and the named playbooks read mt's own names and are refused
// there with what to do instead.
QueryAnswer RemoteQueryAnswer(const JobFiles& job, const QueryTsdbInput& in, const MetricsSource& src, mcp::CallContext* call,
                              Json* stats) {
  // Everything but discover and promql reads per-job behaviour: the job's hosts and step
  // times are placed on the store first.
  const bool job_mode = in.mode == "playbook" || in.mode == "correlate";
  const bool auto_playbook = in.mode == "playbook" && in.playbook.value_or("auto") == "auto";
  std::string from;
  SchedulerAnswer scheduler(job);   // the window and the hosts may both need it: asked once
  PrometheusClient client(src.url, ClientOptionsFor(src));
  std::optional<TsdbWindow> window = StoreWindow(job, ParseTime(in.start, "start"), ParseTime(in.end, "end"),
                                                 ParseTime(in.time, "time"), scheduler, client, &from);
  if (!window)
    throw std::invalid_argument("source: the job's log has no time stamps, the scheduler does not know when it ran and no "
                                "GPU series on the store carries its id (hpc_job, job_id) in the last 30 days, so nothing "
                                "places it on the store's time axis; give start and end (ISO-8601 or Unix seconds)");
  if (window->end <= window->start) throw std::invalid_argument("end must be after start");
  QueryPlan plan = PlanQuery(in, *window);
  TsdbContext ctx(client, *window, call);
  QueryAnswer out;
  const Json triage = in.mode == "promql" ? Json() : TriageForQuery(job, in, window->end);
  const JobHostsOnStore hosts = MatchJobHosts(job, scheduler, ctx);
  std::vector<std::string> notes;
  ModeResult r;
  if (job_mode) {
    if (!hosts.found.empty()) ctx.RestrictHosts(hosts.found);
    SetStepClockFromLog(job, *window, from, scheduler, ctx, &notes);
  }
  if (!job_mode || ctx.Signals().vocabulary == "mt") {
    // discover, promql; or a store with our own names (per-job TSDBs gathered centrally):
    // every mode as on the job's own TSDB
    r = RunMode(ctx, in.mode, plan, triage, &out);
  } else if (auto_playbook) {
    r = RemoteAttribution(ctx, triage, &out);
  } else {
    throw std::invalid_argument("source: mode " + in.mode + (in.playbook ? " " + *in.playbook : "") +
                                " reads mt's own metric names (hw_*), which this store does not have (its exporters' names "
                                "are read by playbook auto); use playbook auto, discover or promql on the series "
                                "attribution.checks name, or the job's own TSDB (no source)");
  }
  FillFromMode(job, in, r, ctx, &out);
  out.tsdb = QueryTsdbInfo{"remote", IsoTime(window->start), IsoTime(window->end), 0,
                           "metrics source '" + src.name + "' at " + client.shown_url(), from, std::nullopt};
  ApplyJobHosts(hosts, &out);
  out.notes.insert(out.notes.end(), notes.begin(), notes.end());
  if (stats) *stats = {{"queries", ctx.queries()}, {"raw_bytes", client.bytes_received()}, {"prometheus_started", false}};
  return out;
}

}  // namespace

QueryAnswer QueryTsdbAnswer(const JobFiles& job, const QueryTsdbInput& in, TsdbManager& manager,
                            const std::vector<MetricsSource>& sources, mcp::CallContext* call, Json* stats) {
  // Bad times are the caller's mistake: say so before any TSDB work (and whatever the job).
  ParseTime(in.start, "start"), ParseTime(in.end, "end"), ParseTime(in.time, "time");
  if (in.source) return RemoteQueryAnswer(job, in, FindMetricsSource(sources, *in.source), call, stats);
  if (job.dir.empty()) throw std::invalid_argument("job " + job.id + " has no job directory, so no TSDB");
  const auto tsdb_dir = job.dir / "prometheus";
  TsdbLayout layout = ReadTsdbLayout(tsdb_dir);
  TsdbWindow data{layout.min_ms / 1000.0, (layout.max_ms - 1) / 1000.0};
  // With no compacted block yet (a job that just started) there is no data end to judge at.
  const Json triage = TriageForQuery(job, in, layout.blocks.empty() ? std::nullopt : std::optional<double>(data.end));
  TsdbSource source;
  source.tsdb_dir = tsdb_dir;
  source.job_running = MayBeRunning(triage);
  if (source.job_running && !job.log.empty()) source.live_port = LivePrometheusPort(job.log);
  QueryPlan plan = PlanQuery(in, data);

  auto run = [&](TsdbLease& lease) {
    PrometheusClient client(lease.url());
    if (lease.source() == "live") AddLiveHead(client, layout, &data);
    TsdbContext ctx(client, data, call);
    QueryAnswer out;
    FillFromMode(job, in, RunMode(ctx, in.mode, plan, triage, &out), ctx, &out);
    out.tsdb = QueryTsdbInfo{lease.source(), IsoTime(data.start), IsoTime(data.end), static_cast<int64_t>(layout.blocks.size()),
                             std::nullopt, std::nullopt, std::nullopt};
    if (!lease.note().empty()) out.tsdb.note = lease.note();
    if (stats)
      *stats = {{"queries", ctx.queries()}, {"raw_bytes", client.bytes_received()}, {"prometheus_started", lease.started()}};
    return out;
  };

  TsdbLease lease = manager.Acquire(source);
  try {
    return run(lease);
  } catch (const PrometheusError& e) {
    // Our Prometheus died mid-call (killed, OOM): start a fresh one and answer anyway.
    if (e.kind() != PrometheusError::Kind::kConnection || lease.source() != "private copy") throw;
    manager.Discard(tsdb_dir);
    TsdbLease again = manager.Acquire(source);
    QueryAnswer out = run(again);
    out.notes.push_back("Prometheus stopped answering during the call and was restarted");
    return out;
  }
}

std::string BoundQueryAnswer(const QueryTsdbInput& in, Json& out) {
  Bound(out, in.detail == "full" ? kFullTokens : kDefaultTokens);
  return QueryTsdbText(out);
}

Json QueryTsdbStructured(const JobFiles& job, const QueryTsdbInput& in, TsdbManager& manager,
                         const std::vector<MetricsSource>& sources, mcp::CallContext* call, Json* stats) {
  Json out = mcp::Encode(QueryTsdbAnswer(job, in, manager, sources, call, stats));
  BoundQueryAnswer(in, out);
  return out;
}

std::string QueryTsdbText(const Json& s) {
  std::string text = s["job"].get<std::string>() + " " + s["mode"].get<std::string>() +
                     (s.contains("playbook") ? " " + s["playbook"].get<std::string>() : "") + " [" +
                     s["window"]["start"].get<std::string>() + " – " + s["window"]["end"].get<std::string>() + "]: " +
                     s["verdict"].get<std::string>();
  for (const auto& f : s["findings"])
    text += "\n  - " + f["verdict"].get<std::string>() + ": " + f["rule"].get<std::string>();
  for (const auto& o : s["outliers"]) {
    text += "\n  ! " + o["host"].get<std::string>() + (o.contains("gpu") ? " gpu " + o["gpu"].get<std::string>() : "") + " " +
            o["metric"].get<std::string>() + " = " + Num(o["value"].get<double>()) + " (baseline " +
            Num(o["baseline"].get<double>()) + ")";
  }
  for (const auto& n : s["notes"]) text += "\n  note: " + n.get<std::string>();
  if (s.contains("omitted")) text += "\n  [" + s["omitted"].get<std::string>() + "]";
  return text;
}

mcp::Tool QueryTsdbTool(const std::filesystem::path& workspace, TsdbManager& manager, std::vector<MetricsSource> sources) {
  TsdbManager* m = &manager;
  return mcp::MakeTypedTool<QueryTsdbInput, QueryAnswer>(
      {.name = "query_tsdb",
       .title = "Query a job's Prometheus TSDB",
       .description = kDescription,
       .annotations = mcp::ToolAnnotations::ReadOnly(),
       // A cold call starts Prometheus on private TSDB copies (seconds to minutes): clients
       // that negotiated the Tasks extension get a task to poll instead of a request that
       // may time out.
       .task_support = mcp::TaskSupport::kOptional},
      [workspace, m, sources = std::move(sources)](const QueryTsdbInput& in, mcp::CallContext& ctx) {
        JobFiles job = Workspace(workspace).Resolve(in.job);
        mcp::WithMeta<QueryAnswer> out;
        Json stats;
        out.answer = QueryTsdbAnswer(job, in, *m, sources, &ctx, &stats);
        out.meta = Json{{"mt/tsdb", std::move(stats)}};
        return out;
      },
      BoundQueryAnswer);
}

void RegisterQueryTsdb(mcp::Registry& registry, const ProductOptions& options) {
  registry.AddTool(QueryTsdbTool(options.workspace, DefaultTsdbManager(), options.metrics_sources));
}

}  // namespace mt::tools
