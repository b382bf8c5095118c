// mt trace: profiler traces read and decomposed (tools/trace): per trace the steady step's
// compute / exposed communication / memcpy / idle split, the top kernels and collectives;
// across the traces given, which rank the others wait for; with --base, what changed.
//   mt trace PATH... [--base PATH...] [--json]
// A PATH is a trace file (*.pt.trace.json[.gz], *.xplane.pb) or a directory searched for them.
#include <cstdio>
#include <iostream>

#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/trace/rank_comparison.h"
#include "tools/trace/trace_diff.h"
#include "tools/trace/trace_files.h"
#include "tools/trace/trace_json.h"

namespace mt::tools::cli {
namespace {

namespace tr = mt::tools::trace;

constexpr const char* kUsage = "usage: mt trace PATH... [--base PATH...] [--json]\n";

// Reads every trace under `paths`; false after printing the first error.
bool Load(const std::vector<std::string>& paths, std::vector<tr::TraceAnalysis>* out) {
  for (const std::string& p : paths) {
    auto files = tr::FindTraceFiles(p);
    if (!files.ok()) {
      std::cerr << "mt trace: " << files.message() << "\n";
      return false;
    }
    if (files->empty()) {
      std::cerr << "mt trace: " << p << " holds no profiler trace (*.pt.trace.json[.gz], *.xplane.pb)\n";
      return false;
    }
    for (const auto& f : *files) {
      auto a = tr::AnalyseTraceFile(f);
      if (!a.ok()) {
        std::cerr << "mt trace: " << a.message() << "\n";
        return false;
      }
      out->insert(out->end(), a->begin(), a->end());
    }
  }
  return true;
}

std::string Ms(const std::optional<double>& us) {
  if (!us) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f ms", *us / 1000);
  return b;
}

std::string Pct(double share) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * share);
  return b;
}

void PrintAnalysis(const tr::TraceAnalysis& a) {
  std::cout << a.file << "  (" << a.format << ", " << a.mode << ", " << a.per_step.size() << " steps, "
            << a.steady.steps.size() << " steady)\n";
  if (a.steady.shares) {
    const tr::Shares& s = *a.steady.shares;
    std::cout << "  step " << Ms(a.steady.step_time_us) << ": compute " << Pct(s.compute) << ", exposed comm "
              << Pct(s.exposed_comm) << " (comm " << Pct(s.comm) << "), memcpy/memset " << Pct(s.memcpy_memset_exposed)
              << ", idle " << Pct(s.idle) << "\n";
  }
  for (size_t i = 0; i < a.top.size() && i < 5; ++i)
    std::cout << "  " << (i == 0 ? "top: " : "     ") << Ms(a.top[i].total_us) << "  " << a.top[i].count << "x  "
              << a.top[i].name.substr(0, 80) << "\n";
  for (const tr::CollectiveFigures& c : a.collectives) {
    std::cout << "  " << c.kind << ": " << c.count << "x, " << Ms(c.total_us);
    if (c.busbw_gbps) {
      char b[64];
      std::snprintf(b, sizeof b, ", bus bandwidth %.1f GB/s", *c.busbw_gbps);
      std::cout << b;
    }
    std::cout << "\n";
  }
  for (const std::string& n : a.notes) std::cout << "  note: " << n << "\n";
}

}  // namespace

int RunTrace(const std::vector<std::string>& args) {
  Flags flags(args, {"base"}, {"json"});
  if (!flags.ok()) {
    std::cerr << "mt trace: " << flags.error() << "\n" << kUsage;
    return kExitUsage;
  }
  if (flags.positional().empty()) {
    std::cerr << "mt trace: give one or more trace files or directories\n" << kUsage;
    return kExitUsage;
  }
  std::vector<tr::TraceAnalysis> test, base;
  if (!Load(flags.positional(), &test) || !Load(flags.values("base"), &base)) return kExitFailed;
  tr::RankComparison ranks = tr::CompareRanks(test);
  // Each test trace against the base trace of the same rank (the first base when one).
  std::vector<std::pair<int64_t, tr::TraceDiff>> diffs;
  for (size_t i = 0; i < test.size() && !base.empty(); ++i) {
    int64_t rank = tr::RankOf(test[i], i);
    const tr::TraceAnalysis* match = base.size() == 1 ? &base.front() : nullptr;
    for (size_t j = 0; j < base.size() && match == nullptr; ++j)
      if (tr::RankOf(base[j], j) == rank) match = &base[j];
    if (match != nullptr) diffs.emplace_back(rank, tr::DiffTraces(*match, test[i]));
  }
  if (flags.has("json")) {
    Json out = {{"traces", Json::array()}, {"ranks", tr::RankComparisonJson(ranks)}};
    for (const auto& a : test) out["traces"].push_back(tr::AnalysisJson(a));
    if (!base.empty()) {
      out["base"] = Json::array();
      for (const auto& a : base) out["base"].push_back(tr::AnalysisJson(a));
      out["base_ranks"] = tr::RankComparisonJson(tr::CompareRanks(base));
      out["diffs"] = Json::array();
      for (const auto& [rank, d] : diffs) {
        Json j = tr::TraceDiffJson(d);
        j["rank"] = rank;
        out["diffs"].push_back(j);
      }
    }
    std::cout << out.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
    return kExitOk;
  }
  for (const auto& a : test) PrintAnalysis(a);
  if (test.size() > 1) std::cout << "ranks: " << ranks.verdict << ": " << ranks.why << "\n";
  for (const auto& [rank, d] : diffs) std::cout << "rank " << rank << " vs base: " << d.summary << "\n";
  if (!base.empty() && diffs.empty()) std::cout << "no base trace has the rank of a trace given: nothing to diff\n";
  return kExitOk;
}

}  // namespace mt::tools::cli
