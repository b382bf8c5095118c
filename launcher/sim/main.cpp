// mt-simtrain: a simulated MaxText training run, as seen from outside.
//
//   mt-simtrain --scenario FILE --workspace DIR [--no-tsdb] [--keep-openmetrics]
//       compressed time: writes the whole job (log, TFEvent file, TSDB, artifact) at once
//   mt-simtrain --demo-init DIR
//       the case-study workspace (what `mt demo init DIR` does)
//   mt-simtrain --scenario-fuzz SEED --out DIR
//       a random scenario with ground truth: job(s) + truth.json in DIR (scenario_fuzz.h)
//   mt-simtrain --scenario FILE --realtime --out DIR [--step-seconds S] [--fake-root DIR] [--rank R]
//       real time: see docs/simtrain.md
//
// Exit codes: 0 ok, 1 the operation failed, 2 usage error.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "launcher/demo/workspace.h"
#include "launcher/sim/job_writer.h"
#include "launcher/sim/realtime.h"
#include "launcher/sim/scenario.h"
#include "launcher/sim/scenario_fuzz.h"
#include "launcher/sim/timeline.h"

namespace {

constexpr const char* kUsage =
    "usage: mt-simtrain --scenario FILE --workspace DIR [--no-tsdb] [--keep-openmetrics] [--promtool PATH] [--parallel N]\n"
    "       mt-simtrain --demo-init DIR [--only ID[,ID...]] [--no-tsdb] [--promtool PATH] [--parallel N]\n"
    "       mt-simtrain --scenario FILE --realtime [--step-seconds S] [--startup-seconds S] [--max-seconds S]\n"
    "                   [--rank R|auto] [--log FILE] [--out DIR] [--fake-root DIR] [--root-interval S] [--event-host NAME]\n"
    "       mt-simtrain --scenario FILE --check      (validate and print the timeline summary)\n"
    "       mt-simtrain --scenario-fuzz SEED --out DIR [--promtool PATH] [--parallel N]\n";

int Usage(const std::string& msg) {
  if (!msg.empty()) std::fprintf(stderr, "mt-simtrain: %s\n", msg.c_str());
  std::fputs(kUsage, stderr);
  return 2;
}

bool ReadFile(const std::string& path, std::string* out, std::string* err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *err = "cannot read " + path + ": " + std::strerror(errno);
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  if (out->size() > (1u << 20)) {
    *err = path + ": scenario file larger than 1 MiB";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string scenario_path, workspace, demo_dir, promtool, only, fuzz_seed;
  bool no_tsdb = false, keep_om = false, check = false, realtime = false;
  int parallel = 2;
  mt::launch::sim::RealtimeOptions rt;
  std::string rank_arg, log_path, out_dir, fake_root;
  auto seconds = [](const std::string& v, double* out) {
    try {
      size_t used = 0;
      *out = std::stod(v, &used);
      return used == v.size() && *out >= 0 && *out < 1e7;
    } catch (...) {
      return false;
    }
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    if (a == "--scenario") { if (!value(&scenario_path)) return Usage("--scenario needs a file"); }
    else if (a == "--workspace") { if (!value(&workspace)) return Usage("--workspace needs a directory"); }
    else if (a == "--demo-init") { if (!value(&demo_dir)) return Usage("--demo-init needs a directory"); }
    else if (a == "--promtool") { if (!value(&promtool)) return Usage("--promtool needs a path"); }
    else if (a == "--scenario-fuzz") { if (!value(&fuzz_seed)) return Usage("--scenario-fuzz needs a seed"); }
    else if (a == "--only") { if (!value(&only)) return Usage("--only needs job ids"); }
    else if (a == "--parallel") {
      std::string v;
      if (!value(&v)) return Usage("--parallel needs a number");
      try { parallel = std::stoi(v); } catch (...) { return Usage("--parallel needs a number"); }
      if (parallel < 1 || parallel > 64) return Usage("--parallel must be 1..64");
    }
    else if (a == "--step-seconds" || a == "--startup-seconds" || a == "--max-seconds" || a == "--root-interval") {
      std::string v;
      double* target = a == "--step-seconds" ? &rt.step_seconds : a == "--startup-seconds" ? &rt.startup_seconds
                       : a == "--max-seconds" ? &rt.max_seconds : &rt.root_interval;
      if (!value(&v) || !seconds(v, target)) return Usage(a + " needs a number of seconds");
    }
    else if (a == "--rank") { if (!value(&rank_arg)) return Usage("--rank needs a task id or 'auto'"); }
    else if (a == "--log") { if (!value(&log_path)) return Usage("--log needs a file"); }
    else if (a == "--out") { if (!value(&out_dir)) return Usage("--out needs a directory"); }
    else if (a == "--fake-root") { if (!value(&fake_root)) return Usage("--fake-root needs a directory"); }
    else if (a == "--event-host") { if (!value(&rt.event_host)) return Usage("--event-host needs a name"); }
    else if (a == "--realtime") realtime = true;
    else if (a == "--no-tsdb") no_tsdb = true;
    else if (a == "--keep-openmetrics") keep_om = true;
    else if (a == "--check") check = true;
    else if (a == "-h" || a == "--help") { std::fputs(kUsage, stdout); return 0; }
    else return Usage("unknown argument '" + a + "'");
  }

  if (!demo_dir.empty()) {
    mt::launch::demo::InitOptions opts;
    opts.promtool = promtool;
    opts.parallel = parallel;
    opts.with_tsdb = !no_tsdb;
    for (size_t p = 0; p < only.size();) {
      size_t c = only.find(',', p);
      if (c == std::string::npos) c = only.size();
      if (c > p) opts.only.push_back(only.substr(p, c - p));
      p = c + 1;
    }
    opts.progress = [](const std::string& line) { std::fprintf(stderr, "  %s\n", line.c_str()); };
    const auto t0 = std::chrono::steady_clock::now();
    if (std::string e = mt::launch::demo::InitWorkspace(demo_dir, opts); !e.empty()) {
      std::fprintf(stderr, "mt-simtrain: %s\n", e.c_str());
      return 1;
    }
    std::fprintf(stderr, "workspace %s ready in %.1f s\n", demo_dir.c_str(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return 0;
  }

  if (!fuzz_seed.empty()) {
    if (out_dir.empty()) return Usage("--scenario-fuzz needs --out DIR");
    uint64_t seed = 0;
    try {
      size_t used = 0;
      seed = std::stoull(fuzz_seed, &used);
      if (used != fuzz_seed.size()) throw 0;
    } catch (...) {
      return Usage("--scenario-fuzz needs a non-negative integer seed");
    }
    mt::launch::sim::PromtoolOptions popts;
    popts.binary = promtool.empty() ? mt::launch::sim::DefaultPromtool() : promtool;
    popts.parallel = parallel;
    const auto c = mt::launch::sim::MakeFuzzCase(seed);
    if (std::string e = mt::launch::sim::WriteFuzzCase(c, out_dir, popts); !e.empty()) {
      std::fprintf(stderr, "mt-simtrain: %s\n", e.c_str());
      return 1;
    }
    std::printf("%s\n", out_dir.c_str());
    return 0;
  }
  if (scenario_path.empty()) return Usage("give --scenario FILE or --demo-init DIR");
  std::string text, err;
  if (!ReadFile(scenario_path, &text, &err)) {
    std::fprintf(stderr, "mt-simtrain: %s\n", err.c_str());
    return 1;
  }
  mt::launch::sim::Scenario s;
  if (!mt::launch::sim::ParseScenario(text, scenario_path, &s, &err)) {
    std::fprintf(stderr, "mt-simtrain: %s\n", err.c_str());
    return 1;
  }
  if (check) {
    const auto tl = mt::launch::sim::BuildTimeline(s);
    std::printf("job %s (%s): %zu hosts, steps %lld..%lld, start %s, end %s, metrics %s..%s\n", s.job_id.c_str(),
                s.JobDirName().c_str(), s.hosts.size(),
                static_cast<long long>(tl.steps.empty() ? -1 : tl.steps.front().step),
                static_cast<long long>(tl.steps.empty() ? -1 : tl.steps.back().step),
                mt::launch::sim::FormatIsoTime(tl.job_start).c_str(), mt::launch::sim::FormatIsoTime(tl.job_end).c_str(),
                mt::launch::sim::FormatIsoTime(tl.metrics_start).c_str(),
                mt::launch::sim::FormatIsoTime(tl.metrics_end).c_str());
    return 0;
  }
  if (realtime) {
    if (!rank_arg.empty()) {
      std::string r = rank_arg;
      if (r == "auto") {
        const char* env = std::getenv("SLURM_PROCID");
        if (!env) env = std::getenv("NODE_RANK");
        if (!env) return Usage("--rank auto needs SLURM_PROCID or NODE_RANK in the environment");
        r = env;
      }
      try {
        size_t used = 0;
        rt.rank = std::stoi(r, &used);
        if (used != r.size() || rt.rank < 0) throw 0;
      } catch (...) {
        return Usage("--rank needs a task id or 'auto'");
      }
    }
    if (rt.step_seconds <= 0 || rt.root_interval <= 0) return Usage("--step-seconds and --root-interval must be > 0");
    rt.log_path = log_path;
    rt.out_dir = out_dir;
    rt.fake_root = fake_root;
    const int code = mt::launch::sim::RunRealtime(s, rt, &err);
    if (code < 0) {
      std::fprintf(stderr, "mt-simtrain: %s\n", err.c_str());
      return 1;
    }
    return code;
  }
  if (workspace.empty()) return Usage("compressed mode needs --workspace DIR");
  mt::launch::sim::GenerateOptions opts;
  opts.with_tsdb = !no_tsdb;
  opts.keep_openmetrics = keep_om;
  opts.promtool.binary = promtool.empty() ? mt::launch::sim::DefaultPromtool() : promtool;
  opts.promtool.parallel = parallel;
  mt::launch::sim::GenerateResult r;
  if (std::string e = mt::launch::sim::GenerateJob(s, workspace, opts, &r); !e.empty()) {
    std::fprintf(stderr, "mt-simtrain: %s\n", e.c_str());
    return 1;
  }
  std::printf("%s\n", r.job_dir.c_str());
  return 0;
}
