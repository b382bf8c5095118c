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
#include <optional>
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

struct Args {
  std::string scenario_path, workspace, demo_dir, promtool, only, fuzz_seed;
  bool no_tsdb = false, keep_om = false, check = false, realtime = false;
  int parallel = 2;
  mt::launch::sim::RealtimeOptions rt;
  std::string rank_arg, log_path, out_dir, fake_root;
};

bool ParseSeconds(const std::string& v, double* out) {
  try {
    size_t used = 0;
    *out = std::stod(v, &used);
    return used == v.size() && *out >= 0 && *out < 1e7;
  } catch (...) {
    return false;
  }
}

// Reads the command line into `args`; returns the exit code when main is to stop here
// (a usage error, or --help).
std::optional<int> ParseArgs(int argc, char** argv, Args& args) {
  auto& rt = args.rt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    if (a == "--scenario") { if (!value(&args.scenario_path)) return Usage("--scenario needs a file"); }
    else if (a == "--workspace") { if (!value(&args.workspace)) return Usage("--workspace needs a directory"); }
    else if (a == "--demo-init") { if (!value(&args.demo_dir)) return Usage("--demo-init needs a directory"); }
    else if (a == "--promtool") { if (!value(&args.promtool)) return Usage("--promtool needs a path"); }
    else if (a == "--scenario-fuzz") { if (!value(&args.fuzz_seed)) return Usage("--scenario-fuzz needs a seed"); }
    else if (a == "--only") { if (!value(&args.only)) return Usage("--only needs job ids"); }
    else if (a == "--parallel") {
      std::string v;
      if (!value(&v)) return Usage("--parallel needs a number");
      try { args.parallel = std::stoi(v); } catch (...) { return Usage("--parallel needs a number"); }
      if (args.parallel < 1 || args.parallel > 64) return Usage("--parallel must be 1..64");
    }
    else if (a == "--step-seconds" || a == "--startup-seconds" || a == "--max-seconds" || a == "--root-interval") {
      std::string v;
      double* target = a == "--step-seconds" ? &rt.step_seconds : a == "--startup-seconds" ? &rt.startup_seconds
                       : a == "--max-seconds" ? &rt.max_seconds : &rt.root_interval;
      if (!value(&v) || !ParseSeconds(v, target)) return Usage(a + " needs a number of seconds");
    }
    else if (a == "--rank") { if (!value(&args.rank_arg)) return Usage("--rank needs a task id or 'auto'"); }
    else if (a == "--log") { if (!value(&args.log_path)) return Usage("--log needs a file"); }
    else if (a == "--out") { if (!value(&args.out_dir)) return Usage("--out needs a directory"); }
    else if (a == "--fake-root") { if (!value(&args.fake_root)) return Usage("--fake-root needs a directory"); }
    else if (a == "--event-host") { if (!value(&rt.event_host)) return Usage("--event-host needs a name"); }
    else if (a == "--realtime") args.realtime = true;
    else if (a == "--no-tsdb") args.no_tsdb = true;
    else if (a == "--keep-openmetrics") args.keep_om = true;
    else if (a == "--check") args.check = true;
    else if (a == "-h" || a == "--help") { std::fputs(kUsage, stdout); return 0; }
    else return Usage("unknown argument '" + a + "'");
  }
  return std::nullopt;
}

// --demo-init DIR: the case-study workspace.
int RunDemoInit(const Args& args) {
  mt::launch::demo::InitOptions opts;
  opts.promtool = args.promtool;
  opts.parallel = args.parallel;
  opts.with_tsdb = !args.no_tsdb;
  const std::string& only = args.only;
  for (size_t p = 0; p < only.size();) {
    size_t c = only.find(',', p);
    if (c == std::string::npos) c = only.size();
    if (c > p) opts.only.push_back(only.substr(p, c - p));
    p = c + 1;
  }
  opts.progress = [](const std::string& line) { std::fprintf(stderr, "  %s\n", line.c_str()); };
  const auto t0 = std::chrono::steady_clock::now();
  if (const mt::base::Status e = mt::launch::demo::InitWorkspace(args.demo_dir, opts); !e.ok()) {
    std::fprintf(stderr, "mt-simtrain: %s\n", e.message().c_str());
    return 1;
  }
  std::fprintf(stderr, "workspace %s ready in %.1f s\n", args.demo_dir.c_str(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return 0;
}

// --scenario-fuzz SEED --out DIR: a random scenario with its ground truth.
int RunScenarioFuzz(const Args& args) {
  if (args.out_dir.empty()) return Usage("--scenario-fuzz needs --out DIR");
  uint64_t seed = 0;
  try {
    size_t used = 0;
    seed = std::stoull(args.fuzz_seed, &used);
    if (used != args.fuzz_seed.size()) throw 0;
  } catch (...) {
    return Usage("--scenario-fuzz needs a non-negative integer seed");
  }
  mt::launch::sim::PromtoolOptions popts;
  popts.binary = args.promtool.empty() ? mt::launch::sim::DefaultPromtool() : args.promtool;
  popts.parallel = args.parallel;
  const auto c = mt::launch::sim::MakeFuzzCase(seed);
  if (const mt::base::Status e = mt::launch::sim::WriteFuzzCase(c, args.out_dir, popts); !e.ok()) {
    std::fprintf(stderr, "mt-simtrain: %s\n", e.message().c_str());
    return 1;
  }
  std::printf("%s\n", args.out_dir.c_str());
  return 0;
}

// --check: validate and print the timeline summary.
int PrintTimelineSummary(const mt::launch::sim::Scenario& s) {
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

// --realtime: see docs/simtrain.md. `err` is the caller's error buffer.
int RunRealtimeMode(const mt::launch::sim::Scenario& s, const Args& args, std::string& err) {
  mt::launch::sim::RealtimeOptions rt = args.rt;
  if (!args.rank_arg.empty()) {
    std::string r = args.rank_arg;
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
  rt.log_path = args.log_path;
  rt.out_dir = args.out_dir;
  rt.fake_root = args.fake_root;
  const int code = mt::launch::sim::RunRealtime(s, rt, &err);
  if (code < 0) {
    std::fprintf(stderr, "mt-simtrain: %s\n", err.c_str());
    return 1;
  }
  return code;
}

// Compressed time: the whole job written at once into the workspace.
int RunCompressed(const mt::launch::sim::Scenario& s, const Args& args) {
  if (args.workspace.empty()) return Usage("compressed mode needs --workspace DIR");
  mt::launch::sim::GenerateOptions opts;
  opts.with_tsdb = !args.no_tsdb;
  opts.keep_openmetrics = args.keep_om;
  opts.promtool.binary = args.promtool.empty() ? mt::launch::sim::DefaultPromtool() : args.promtool;
  opts.promtool.parallel = args.parallel;
  mt::launch::sim::GenerateResult r;
  if (const mt::base::Status e = mt::launch::sim::GenerateJob(s, args.workspace, opts, &r); !e.ok()) {
    std::fprintf(stderr, "mt-simtrain: %s\n", e.message().c_str());
    return 1;
  }
  std::printf("%s\n", r.job_dir.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (std::optional<int> code = ParseArgs(argc, argv, args)) return *code;
  if (!args.demo_dir.empty()) return RunDemoInit(args);
  if (!args.fuzz_seed.empty()) return RunScenarioFuzz(args);
  if (args.scenario_path.empty()) return Usage("give --scenario FILE or --demo-init DIR");
  std::string text, err;
  if (!ReadFile(args.scenario_path, &text, &err)) {
    std::fprintf(stderr, "mt-simtrain: %s\n", err.c_str());
    return 1;
  }
  mt::launch::sim::Scenario s;
  if (!mt::launch::sim::ParseScenario(text, args.scenario_path, &s, &err)) {
    std::fprintf(stderr, "mt-simtrain: %s\n", err.c_str());
    return 1;
  }
  if (args.check) return PrintTimelineSummary(s);
  if (args.realtime) return RunRealtimeMode(s, args, err);
  return RunCompressed(s, args);
}
