#include "tools/trace/rank_comparison.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>

namespace mt::tools::trace {
namespace {

std::optional<int64_t> RankFromName(const std::string& file) {
  static const std::regex kRank(R"((?:^|[^a-z])rank[-_]?(\d{1,7})(?:\D|$))", std::regex::icase);
  std::smatch m;
  if (std::regex_search(file, m, kRank)) return std::stoll(m[1]);
  return std::nullopt;
}

std::string Pct(double share) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", 100 * share);
  return b;
}

void Straggler(RankComparison& out, const StragglerRule& rule) {
  std::vector<const RankFigures*> with;
  for (const RankFigures& r : out.ranks)
    if (r.own_share) with.push_back(&r);
  if (with.size() < 2) {
    out.verdict = "unknown";
    out.why = with.empty() ? "no rank has steady steps to compare"
                           : "one rank only: a straggler shows against the other ranks' traces of the same steps";
    return;
  }
  std::sort(with.begin(), with.end(), [](auto* a, auto* b) { return *a->own_share > *b->own_share; });
  const RankFigures& top = *with[0];
  out.lead = *top.own_share - *with[1]->own_share;
  double wait = 0;
  for (size_t i = 1; i < with.size(); ++i) wait += *with[i]->exposed_comm_share;
  out.others_exposed_comm_share = wait / static_cast<double>(with.size() - 1);
  if (out.lead >= rule.min_lead && out.others_exposed_comm_share >= rule.min_wait) {
    out.verdict = "straggler";
    out.straggler = top.rank;
    out.why = "rank " + std::to_string(top.rank) + " waits for communication " + Pct(*top.exposed_comm_share) +
              " of its step while the other ranks wait " + Pct(out.others_exposed_comm_share) +
              " on average: they wait for it (its own work is " + Pct(*top.own_share) + " of the step, " +
              Pct(out.lead) + " more than the next rank)";
  } else {
    out.verdict = "balanced";
    out.why = "no rank holds the others up: the busiest, rank " + std::to_string(top.rank) + ", leads the next by " +
              Pct(out.lead) + " of a step, and the others wait " + Pct(out.others_exposed_comm_share) +
              " on average (a straggler needs a lead of " + Pct(rule.min_lead) + " and a wait of " +
              Pct(rule.min_wait) + ")";
  }
}

void PerStep(RankComparison& out, const std::vector<TraceAnalysis>& analyses) {
  std::map<std::string, std::vector<std::pair<int64_t, double>>> own;   // step → (rank, own µs)
  for (size_t i = 0; i < analyses.size(); ++i)
    for (const StepFigures& f : analyses[i].per_step)
      if (f.step_time_us > 0) own[f.name].emplace_back(out.ranks[i].rank, f.step_time_us - f.exposed_comm_us);
  for (auto& [step, v] : own) {
    if (v.size() != analyses.size() || v.size() < 2) continue;
    std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second > b.second; });
    out.per_step.push_back({step, v[0].first, v[0].second, v[1].second});
  }
  // By step number: the digits after '#', compared as digit strings (any length).
  std::sort(out.per_step.begin(), out.per_step.end(), [](auto& a, auto& b) {
    auto digits = [](const std::string& s) { return s.substr(s.find('#') + 1); };
    std::string x = digits(a.step), y = digits(b.step);
    return x.size() != y.size() ? x.size() < y.size() : x < y;
  });
}

void Collectives(RankComparison& out, const std::vector<TraceAnalysis>& analyses) {
  std::map<std::string, std::vector<std::pair<int64_t, double>>> per_kind;
  for (size_t i = 0; i < analyses.size(); ++i) {
    size_t steps = std::max<size_t>(1, analyses[i].per_step.size());
    for (const CollectiveFigures& c : analyses[i].collectives)
      per_kind[c.kind].emplace_back(out.ranks[i].rank, c.total_us / static_cast<double>(steps));
  }
  for (auto& [kind, v] : per_kind) {
    if (v.size() != analyses.size() || v.size() < 2) continue;
    auto [lo, hi] = std::minmax_element(v.begin(), v.end(), [](auto& a, auto& b) { return a.second < b.second; });
    out.collectives.push_back({kind, lo->first, hi->first, lo->second, hi->second});
  }
}

}  // namespace

int64_t RankOf(const TraceAnalysis& a, size_t position, std::string* source) {
  std::string ignored;
  std::string& src = source != nullptr ? *source : ignored;
  if (a.rank) {
    src = "distributedInfo";
    return *a.rank;
  }
  if (auto n = RankFromName(a.file)) {
    src = "file name";
    return *n;
  }
  src = "position";
  return static_cast<int64_t>(position);
}

RankComparison CompareRanks(const std::vector<TraceAnalysis>& analyses, const StragglerRule& rule) {
  RankComparison out;
  for (size_t i = 0; i < analyses.size(); ++i) {
    const TraceAnalysis& a = analyses[i];
    RankFigures r;
    r.file = a.file;
    r.rank = RankOf(a, i, &r.rank_source);
    r.step_time_us = a.steady.step_time_us;
    if (a.steady.shares) {
      r.exposed_comm_share = a.steady.shares->exposed_comm;
      r.own_share = 1 - a.steady.shares->exposed_comm;
      r.compute_share = a.steady.shares->compute;
      r.idle_share = a.steady.shares->idle;
    }
    out.ranks.push_back(r);
  }
  Straggler(out, rule);
  PerStep(out, analyses);
  Collectives(out, analyses);
  std::stable_sort(out.ranks.begin(), out.ranks.end(), [](auto& a, auto& b) { return a.rank < b.rank; });
  return out;
}

}  // namespace mt::tools::trace
