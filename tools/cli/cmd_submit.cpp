// mt submit: model spec + scheduler args + `-- passthrough` → a plan → (confirmation) →
// artifact snapshot → backend. The plan is printed by --dry-run (--json: as JSON).
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <optional>

#include "launcher/launch/plan.h"
#include "launcher/launch/submit.h"
#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/catalog/config.h"

namespace mt::tools::cli {

int RunWatch(const std::vector<std::string>& args);   // cmd_watch.cpp
Flags WatchFlags(const std::vector<std::string>& args);

namespace {

const char* kUsage =
    "usage: mt submit MODEL[[:alias]:tag] [--backend local|slurm|k8s] [-N n] [--observe] [--dry-run] [--json]\n"
    "                 [--yes] [--workspace DIR] [--config FILE] [--models DIR] [--stage-timeout train:S]\n"
    "                 [--pack-tasks] [--exporter-port P] [--prometheus-ports A-B] [--scrape-interval S]\n"
    "                 [--supervise [--watch-args 'ARGS']]\n"
    "                 [scheduler args…] [-- passthrough…]";

int Usage(const std::string& why) {
  std::cerr << "mt submit: " << why << "\n" << kUsage << "\n";
  return kExitUsage;
}

bool ParseInt(const std::string& s, int* out) {
  try {
    size_t used = 0;
    *out = std::stoi(s, &used);
    return used == s.size();
  } catch (...) {
    return false;
  }
}

struct SubmitArgs {
  launch::PlanRequest req;
  std::optional<std::string> workspace, config, models;
  bool dry_run = false, json = false, yes = false, supervise = false;
  std::string watch_args;   // --watch-args: more flags for the watch (space-separated)
  std::string timeouts;   // stage:seconds,… (STAGE_TIMEOUTS, then each --stage-timeout)
};

// Reads the command line into `s`; an exit code when it is not usable.
std::optional<int> ParseSubmitArgs(const std::vector<std::string>& args, SubmitArgs& s) {
  launch::PlanRequest& req = s.req;
  size_t i = 0;
  auto value = [&](const std::string& flag, std::string* out) {
    const std::string& a = args[i];
    if (a.size() > flag.size() && a.compare(0, flag.size() + 1, flag + "=") == 0) return *out = a.substr(flag.size() + 1), true;
    if (a != flag) return false;
    if (i + 1 >= args.size()) throw std::invalid_argument(flag + " needs a value");
    *out = args[++i];
    return true;
  };
  try {
    for (; i < args.size(); ++i) {
      const std::string& a = args[i];
      std::string v;
      if (a == "--") {
        req.passthrough.assign(args.begin() + static_cast<long>(i) + 1, args.end());
        break;
      }
      if (a == "--dry-run") s.dry_run = true;
      else if (a == "--json") s.json = true;
      else if (a == "--yes" || a == "-y") s.yes = true;
      else if (a == "--observe") req.observe = true;
      else if (a == "--supervise") s.supervise = true;
      else if (value("--watch-args", &v)) s.watch_args = v;
      else if (a == "--pack-tasks") req.pack_tasks = true;
      else if (value("--backend", &v)) req.backend = v;
      else if (value("--workspace", &v)) s.workspace = v;
      else if (value("--config", &v)) s.config = v;
      else if (value("--models", &v)) s.models = v;
      else if (value("--stage-timeout", &v)) s.timeouts += (s.timeouts.empty() ? "" : ",") + v;
      else if (value("--exporter-port", &v)) {
        if (!ParseInt(v, &req.exporter_port) || req.exporter_port < 1 || req.exporter_port > 65535)
          return Usage("--exporter-port needs a port number");
      } else if (value("--prometheus-ports", &v)) {
        const auto dash = v.find('-');
        if (dash == std::string::npos || !ParseInt(v.substr(0, dash), &req.prometheus_port_first) ||
            !ParseInt(v.substr(dash + 1), &req.prometheus_port_last))
          return Usage("--prometheus-ports needs FIRST-LAST");
      } else if (value("--scrape-interval", &v)) {
        try { req.scrape_interval_s = std::stod(v); } catch (...) { return Usage("--scrape-interval needs seconds"); }
      } else if (value("--nodes", &v) || value("-N", &v) || (a.rfind("-N", 0) == 0 && a.size() > 2 && (v = a.substr(2), true))) {
        if (!ParseInt(v, &req.nodes) || req.nodes < 1) return Usage("-N needs a positive number of nodes");
      } else if (req.model_spec.empty() && !a.empty() && a[0] != '-') {
        req.model_spec = a;
      } else {
        req.scheduler_args.push_back(a);   // verbatim to the scheduler (e.g. --time=10, -p debug)
      }
    }
  } catch (const std::invalid_argument& e) {
    return Usage(e.what());
  }
  return std::nullopt;
}

// stage:seconds,… ("none": no timeout) into req.stage_timeouts; an exit code when malformed.
std::optional<int> ParseStageTimeouts(const std::string& timeouts, launch::PlanRequest& req) {
  for (size_t s = 0; !timeouts.empty() && s != std::string::npos;) {
    const size_t comma = timeouts.find(',', s);
    const std::string item = timeouts.substr(s, comma == std::string::npos ? std::string::npos : comma - s);
    const auto colon = item.find(':');
    int secs = 0;
    const std::string val = colon == std::string::npos ? "" : item.substr(colon + 1);
    if (val == "none") secs = -1;
    else if (colon == std::string::npos || !ParseInt(val, &secs)) return Usage("stage timeout '" + item + "' is not stage:seconds");
    req.stage_timeouts[item.substr(0, colon)] = secs;
    s = comma == std::string::npos ? comma : comma + 1;
  }
  return std::nullopt;
}

void PrintDryRun(const launch::Plan& plan, bool json) {
  if (json) {
    nlohmann::json out = {{"plan", plan.ToJson()}, {"submitted", false}, {"files", launch::PlanFiles(plan)}};
    std::cout << out.dump() << "\n";
  } else {
    std::cout << launch::DescribePlan(plan) << "(dry run: nothing was submitted)\n";
  }
}

// Asks on the terminal; false (said on stderr) when there is none or the answer is not yes.
bool Confirmed(const launch::Plan& plan) {
  if (!isatty(STDIN_FILENO)) {
    std::cerr << launch::DescribePlan(plan)
              << "mt submit: no terminal to confirm on and no --yes; nothing was submitted\n";
    return false;
  }
  std::cerr << launch::DescribePlan(plan) << "Submit this job? [y/N] " << std::flush;
  std::string answer;
  std::getline(std::cin, answer);
  if (answer != "y" && answer != "Y" && answer != "yes") {
    std::cerr << "mt submit: not confirmed; nothing was submitted\n";
    return false;
  }
  return true;
}

void PrintSubmitted(const launch::Plan& plan, const launch::SubmitResult& r, bool json) {
  if (json) {
    nlohmann::json out = {{"plan", plan.ToJson()},         {"submitted", true},           {"job_id", r.job_id},
                          {"job_dir", r.job_dir.string()}, {"log", r.log.string()}, {"artifact", r.artifact.string()}};
    std::cout << out.dump() << "\n";
  } else {
    std::cout << "Submitted job " << r.job_id << " (" << plan.backend << ", plan " << plan.hash.substr(0, 16) << ")\n"
              << "  log:      " << r.log.string() << "\n  job dir:  " << r.job_dir.string()
              << "\n  artifact: " << r.artifact.string() << "\n";
  }
}

}  // namespace

int RunSubmit(const std::vector<std::string>& args) {
  SubmitArgs s;
  launch::PlanRequest& req = s.req;
  s.timeouts = std::getenv("STAGE_TIMEOUTS") ? std::getenv("STAGE_TIMEOUTS") : "";
  if (const char* v = std::getenv("MT_SLURM_PACK_TASKS"); v && std::string(v) == "1") req.pack_tasks = true;
  if (std::optional<int> code = ParseSubmitArgs(args, s)) return *code;
  if (req.model_spec.empty()) return Usage("a model name is required");
  if (std::optional<int> code = ParseStageTimeouts(s.timeouts, req)) return *code;

  Config cfg;
  try {
    cfg = ResolveConfig(s.config, s.workspace);
  } catch (const std::exception& e) {
    std::cerr << "mt submit: " << e.what() << "\n";
    return kExitFailed;
  }
  req.workspace = cfg.workspace;
  req.models_dir = s.models ? std::filesystem::path(*s.models) : launch::DefaultModelsDir();
  req.repo_dir = std::filesystem::absolute(req.models_dir).parent_path().parent_path();
  launch::ResolveBinaries(&req);

  launch::Plan plan;
  if (const base::Status st = launch::BuildPlan(req, &plan); !st.ok()) {
    std::cerr << "mt submit: " << st.message() << "\nnothing was submitted\n";
    return kExitFailed;
  }
  if (s.dry_run) {
    PrintDryRun(plan, s.json);
    return kExitOk;
  }
  std::vector<std::string> watch;   // --supervise: checked before anything is submitted
  if (s.supervise) {
    for (size_t i = 0; i < s.watch_args.size();) {
      const size_t sp = s.watch_args.find(' ', i);
      const std::string w = s.watch_args.substr(i, sp == std::string::npos ? std::string::npos : sp - i);
      if (!w.empty()) watch.push_back(w);
      i = sp == std::string::npos ? s.watch_args.size() : sp + 1;
    }
    Flags check = WatchFlags(watch);
    if (!check.ok()) return Usage("--watch-args: " + check.error());
    if (!check.positional().empty()) return Usage("--watch-args: unexpected '" + check.positional()[0] + "'");
  }
  if (!s.yes && !Confirmed(plan)) return kExitFailed;
  std::vector<std::string> cmd = {"mt", "submit"};
  cmd.insert(cmd.end(), args.begin(), args.end());
  launch::SubmitResult r;
  if (const base::Status st = launch::Submit(plan, cmd, &r); !st.ok()) {
    std::cerr << "mt submit: " << st.message() << "\nnothing was submitted (no artifact or job directory left behind)\n";
    return kExitFailed;
  }
  PrintSubmitted(plan, r, s.json);
  if (!s.supervise) return kExitOk;
  // --supervise: this process becomes the job's watch (mt watch JOB), restarts through the gate.
  watch.insert(watch.begin(), {r.job_id, "--workspace", cfg.workspace.string()});
  if (s.config) watch.insert(watch.end(), {"--config", *s.config});
  if (s.json) watch.push_back("--json");   // after the submit's object, one finding a line
  std::cout.flush();
  return RunWatch(watch);
}

}  // namespace mt::tools::cli
