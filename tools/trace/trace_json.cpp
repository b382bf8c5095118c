#include "tools/trace/trace_json.h"

namespace mt::tools::trace {
namespace {

Json Opt(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }
Json OptI(const std::optional<int64_t>& v) { return v ? Json(*v) : Json(nullptr); }

Json SharesJson(const std::optional<Shares>& s) {
  if (!s) return nullptr;
  return {{"compute", s->compute}, {"comm", s->comm}, {"exposed_comm", s->exposed_comm},
          {"memcpy_memset_exposed", s->memcpy_memset_exposed}, {"idle", s->idle}};
}

Json OpJson(const OpTotal& o) {
  return {{"name", o.name}, {"count", o.count}, {"total_us", o.total_us}, {"mean_us", o.mean_us}};
}

// "i:3" → 3, "s:CPU functions" → "CPU functions" (the key as the trace wrote it).
Json KeyJson(const std::string& k) {
  if (k.rfind("i:", 0) == 0) return std::stoll(k.substr(2));
  if (k.rfind("s:", 0) == 0) return k.substr(2);
  return k;
}

}  // namespace

Json AnalysisJson(const TraceAnalysis& a) {
  Json per_step = Json::array();
  for (const StepFigures& f : a.per_step) {
    Json s = {{"name", f.name}, {"cpu_ts", f.cpu_ts}, {"cpu_dur_us", f.cpu_dur_us},
              {"window_start", Opt(f.window_start)}, {"window_end", Opt(f.window_end)},
              {"step_time_us", f.step_time_us}, {"compute_us", f.compute_us}, {"comm_us", f.comm_us},
              {"exposed_comm_us", f.exposed_comm_us}, {"memcpy_memset_us", f.memcpy_memset_us},
              {"memcpy_memset_exposed_us", f.memcpy_memset_exposed_us}, {"busy_us", f.busy_us},
              {"idle_us", f.idle_us}, {"shares", SharesJson(f.shares)}};
    if (f.gpu_events >= 0) s["gpu_events"] = f.gpu_events;
    if (f.compute_ops >= 0) {
      s["compute_ops"] = f.compute_ops;
      s["comm_ops"] = f.comm_ops;
      s["backend_comm_ops"] = f.backend_comm_ops;
    }
    per_step.push_back(std::move(s));
  }
  const SteadyFigures& st = a.steady;
  Json steady = {{"rule", st.rule}, {"steps", st.steps}, {"n", st.steps.size()},
                 {"mean_step_time_us", Opt(st.step_time_us)}, {"mean_cpu_dur_us", Opt(st.cpu_dur_us)},
                 {"mean_compute_us", Opt(st.compute_us)}, {"mean_comm_us", Opt(st.comm_us)},
                 {"mean_exposed_comm_us", Opt(st.exposed_comm_us)}, {"mean_memcpy_memset_us", Opt(st.memcpy_memset_us)},
                 {"mean_memcpy_memset_exposed_us", Opt(st.memcpy_memset_exposed_us)}, {"mean_idle_us", Opt(st.idle_us)}};
  Json shares = SharesJson(st.shares);
  steady["mean_shares"] = shares.is_null() ? Json{{"compute", nullptr}, {"comm", nullptr}, {"exposed_comm", nullptr},
                                                  {"memcpy_memset_exposed", nullptr}, {"idle", nullptr}}
                                           : shares;
  Json top = Json::array();
  for (const OpTotal& o : a.top) top.push_back(OpJson(o));
  Json coll = Json::object();
  for (const CollectiveFigures& c : a.collectives) {
    Json by_name = Json::object();
    for (const OpTotal& o : c.by_name) by_name[o.name] = {{"count", o.count}, {"total_us", o.total_us}};
    Json k = {{"count", c.count}, {"total_us", c.total_us}, {"sized_count", c.sized_count}, {"bytes", c.bytes},
              {"sized_us", c.sized_us}, {"group_size", OptI(c.group_size)}, {"algbw_GBps", Opt(c.algbw_gbps)},
              {"busbw_GBps", Opt(c.busbw_gbps)},
              {"busbw_formula", c.busbw_formula.empty() ? Json(nullptr) : Json(c.busbw_formula)}, {"by_name", by_name}};
    if (!c.counted_from.empty()) k["counted_from"] = c.counted_from;
    coll[c.kind] = std::move(k);
  }
  Json checks = {{"cpu_step_overlaps", a.cpu_step_overlaps}, {"steps_without_comm", a.steps_without_comm}};
  if (a.gpu_window_overlaps) checks["gpu_window_overlaps"] = *a.gpu_window_overlaps;
  Json links = nullptr;
  if (a.links) {
    const LinkFigures& l = *a.links;
    links = {{"gpu_events", l.gpu_events},
             {"by", {{"correlation", l.by_correlation}, {"flow", l.by_flow}, {"external_id", l.by_external_id}, {"unlinked", l.unlinked}}},
             {"share", l.share}, {"method", l.method}, {"gpu_events_in_no_step", l.in_no_step}};
  }
  Json events = {{"format", a.format}, {"total", a.events}, {"bad_x", a.bad_x}, {"duplicate_steps", a.duplicate_steps}};
  if (a.rank || a.world_size) events["distributedInfo"] = {{"rank", OptI(a.rank)}, {"world_size", OptI(a.world_size)}};
  if (a.training_thread) events["training_thread"] = {KeyJson(a.training_thread->first), KeyJson(a.training_thread->second)};
  return {{"file", a.file}, {"mode", a.mode}, {"events", events}, {"links", links}, {"per_step", per_step},
          {"steady", steady}, {"top_kernels", top}, {"top_kernels_source", a.top_source}, {"collectives", coll},
          {"checks", checks}, {"notes", a.notes}};
}

Json RankComparisonJson(const RankComparison& r) {
  Json ranks = Json::array();
  for (const RankFigures& f : r.ranks)
    ranks.push_back({{"file", f.file}, {"rank", f.rank}, {"rank_source", f.rank_source},
                     {"step_time_us", Opt(f.step_time_us)}, {"own_share", Opt(f.own_share)},
                     {"exposed_comm_share", Opt(f.exposed_comm_share)}, {"compute_share", Opt(f.compute_share)},
                     {"idle_share", Opt(f.idle_share)}});
  Json steps = Json::array();
  for (const StepSlowest& s : r.per_step)
    steps.push_back({{"step", s.step}, {"rank", s.rank}, {"own_us", s.own_us}, {"next_own_us", s.next_own_us}});
  Json coll = Json::array();
  for (const CollectiveSkew& c : r.collectives)
    coll.push_back({{"kind", c.kind}, {"least_rank", c.least_rank}, {"least_us_per_step", c.least_us},
                    {"most_rank", c.most_rank}, {"most_us_per_step", c.most_us}});
  return {{"verdict", r.verdict}, {"straggler", OptI(r.straggler)}, {"lead", r.lead},
          {"others_exposed_comm_share", r.others_exposed_comm_share}, {"why", r.why}, {"ranks", ranks},
          {"slowest_per_step", steps}, {"collectives", coll}};
}

Json TraceDiffJson(const TraceDiff& d) {
  Json cats = Json::array();
  for (const CategoryDelta& c : d.categories)
    cats.push_back({{"category", c.category}, {"base_us", Opt(c.base_us)}, {"test_us", Opt(c.test_us)},
                    {"delta_us", Opt(c.delta_us)}, {"base_share", Opt(c.base_share)}, {"test_share", Opt(c.test_share)}});
  Json ops = Json::array();
  for (const OpDelta& o : d.ops)
    ops.push_back({{"name", o.name}, {"base_us_per_step", o.base_us}, {"test_us_per_step", o.test_us},
                   {"delta_us_per_step", o.delta_us}, {"base_count", o.base_count}, {"test_count", o.test_count}});
  return {{"summary", d.summary}, {"categories", cats}, {"ops", ops}};
}

}  // namespace mt::tools::trace
