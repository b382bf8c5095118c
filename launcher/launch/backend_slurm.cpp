// The Slurm backend: sbatch --hold, the job dir created, then scontrol release; state from

// squeue / scontrol / sacct; scancel.
#include <chrono>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <algorithm>
#include <set>
#include <thread>

#include "launcher/launch/backend.h"
#include "launcher/launch/job_dir.h"
#include "launcher/launch/process.h"
#include "launcher/launch/artifact.h"

namespace mt::launch {
using base::Errc;
using base::Status;
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

class SlurmBackend : public Backend {
 public:
  std::string name() const override { return "slurm"; }
  bool takes_scheduler_args() const override { return true; }
  std::string JobIdBeforeSubmit(const Plan&, const std::string&) const override { return ""; }
  std::vector<std::string> SubmitCommand(const Plan& p) const override {
    std::vector<std::string> argv = {"sbatch", "--parsable", "--hold", "--job-name=" + p.job_name,
                                     "--output=" + (p.workspace / ("%j-" + p.job_name + ".log")).string()};
    if (p.pack_tasks) {
      argv.insert(argv.end(), {"--nodes=1", "--ntasks=" + std::to_string(p.nodes), "--overcommit"});
    } else {
      argv.insert(argv.end(), {"--nodes=" + std::to_string(p.nodes), "--ntasks-per-node=1"});
    }
    argv.insert(argv.end(), p.scheduler_args.begin(), p.scheduler_args.end());
    argv.push_back((p.artifact_dir / "job.sbatch").string());
    return argv;
  }
  void AddPlanFiles(const Plan& p, std::map<std::string, std::string>* files) const override {
    (*files)["job.sbatch"] = SlurmBatchScript(p);
  }

  Status ListNodes(std::vector<std::string>* nodes) const override {
    auto si = RunCapture({"sinfo", "--noheader", "--Node", "--format=%N"}, {}, 60);
    if (si.status != 0)
      return Status(Errc::kFailed, "sinfo failed (exit " + std::to_string(si.status) + "): " + TrimOutput(si.err.empty() ? si.out : si.err));
    std::istringstream lines(si.out);
    for (std::string line; std::getline(lines, line);) {
      line = TrimOutput(line);
      if (!line.empty() && std::find(nodes->begin(), nodes->end(), line) == nodes->end()) nodes->push_back(line);
    }
    return Status::Ok();
  }

  Status Submit(const Plan& p, SubmitResult* r) const override {
    auto sb = RunCapture(p.submit_argv, {}, 120);
    if (sb.status != 0) {
      const std::string why = !sb.error.empty() ? sb.error : TrimOutput(sb.err.empty() ? sb.out : sb.err);
      return Status(Errc::kFailed, "sbatch failed (exit " + std::to_string(sb.status) + "): " + why);
    }
    static const std::regex kId(R"(^\s*(\d+)(;\S+)?\s*$)");
    std::smatch m;
    const std::string out = TrimOutput(sb.out);
    if (!std::regex_match(out, m, kId)) return Status(Errc::kFailed, "sbatch printed no job id: '" + out + "'");
    const std::string id = m[1];
    fs::path dir;
    auto cancel = [&] { RunCapture({"scancel", id}, {}, 30); };
    if (Status st = CreateJobDir(p, id, LaunchRecordJson(p, id), &dir); !st.ok()) return cancel(), st;
    // The job was submitted held, so its directory exists before any task can write into it.
    auto rel = RunCapture({"scontrol", "release", id}, {}, 60);
    if (rel.status != 0) {
      cancel();
      RemoveTree(dir);
      return Status(Errc::kFailed, "scontrol release " + id + " failed: " + TrimOutput(rel.err + rel.out));
    }
    // Prolog kills end a job within seconds and before it writes a log (reference §7).
    const fs::path log = p.workspace / (JobDirName(p, id) + ".log");
    static const std::set<std::string> kDead = {"FAILED", "CANCELLED", "NODE_FAIL", "BOOT_FAIL", "TIMEOUT", "OUT_OF_MEMORY", "DEADLINE"};
    const double check_s = std::getenv("MT_PROLOG_CHECK_S") ? std::atof(std::getenv("MT_PROLOG_CHECK_S")) : 3.0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(check_s);
    while (std::chrono::steady_clock::now() < until) {
      const std::string st = TrimOutput(RunCapture({"squeue", "-h", "-t", "all", "-j", id, "-o", "%T"}, {}, 10).out);
      if (kDead.count(st) && !fs::exists(log)) {
        RemoveTree(dir);
        return Status(Errc::kFailed, "[ERROR] Job " + id + " died in prolog before writing any log: " + st);
      }
      if (st == "RUNNING" || st == "COMPLETING" || st == "COMPLETED" || fs::exists(log)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    r->job_id = id;
    r->job_dir = dir;
    r->log = log;
    return Status::Ok();
  }

  void FillStatus(const LaunchedJob& job, json* s) const override {
    const std::string st = TrimOutput(RunCapture({"squeue", "-h", "-t", "all", "-j", job.id, "-o", "%T"}, {}, 30).out);
    if (!st.empty()) (*s)["state"] = st, (*s)["source"] = "squeue";
    auto sc = RunCapture({"scontrol", "show", "job", job.id}, {}, 30);
    std::smatch m;
    static const std::regex kState(R"(JobState=(\S+))"), kExit(R"(ExitCode=(\d+):(\d+))");
    if (sc.status == 0 && std::regex_search(sc.out, m, kState)) {
      (*s)["state"] = m[1].str(), (*s)["source"] = "scontrol";
      if (std::regex_search(sc.out, m, kExit)) {
        const int rc = std::stoi(m[1]), sig = std::stoi(m[2]);
        if ((*s)["state"] != "RUNNING" && (*s)["state"] != "PENDING") (*s)["exit_code"] = sig ? 128 + sig : rc;
      }
      return;
    }
    if (!st.empty()) return;
    auto sa = RunCapture({"sacct", "-n", "-X", "-P", "-j", job.id, "-o", "State,ExitCode"}, {}, 30);
    const std::string line = TrimOutput(sa.out);
    std::string state;
    int code = 0;
    if (sa.status == 0 && !line.empty() && line.find("disabled") == std::string::npos) {
      (*s)["state"] = line.substr(0, line.find_first_of("| ")), (*s)["source"] = "sacct";
    } else if (SummaryFromLog(job.log, &state, &code)) {
      (*s)["state"] = state, (*s)["exit_code"] = code, (*s)["source"] = "JOB SUMMARY";
    }
  }

  Status Cancel(const LaunchedJob& job, std::string* message) const override {
    auto r = RunCapture({"scancel", job.id}, {}, 60);
    if (r.status != 0) return Status(Errc::kFailed, "scancel " + job.id + " failed: " + TrimOutput(r.err + r.out + r.error));
    *message = "scancel " + job.id + " done";
    return Status::Ok();
  }
};

}  // namespace

const Backend& SlurmBackendInstance() {
  static const SlurmBackend b;
  return b;
}

}  // namespace mt::launch
