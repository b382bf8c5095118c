#include "launcher/launch/submit.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <cstring>
#include <thread>

#include "base/atomic_file.h"
#include "base/strings.h"
#include "base/workspace_files.h"
#include "launcher/launch/artifact.h"
#include "launcher/launch/k8s_manifest.h"
#include "launcher/launch/process.h"

namespace mt::launch {
namespace fs = std::filesystem;
using nlohmann::json;

int FirstFreePort(int first, int last) {
  for (int port = first; port <= last; ++port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    close(fd);
    if (ok) return port;
  }
  return -1;
}

// A command's output without the white space around it (scheduler states, job ids, errors).
static std::string Trim(const std::string& s) { return std::string(base::Trim(s)); }

// <ws>/<id>-<name>/ with its links and launch record, built beside and renamed in.
static std::string CreateJobDir(const Plan& p, const std::string& id, const json& record, fs::path* dir) {
  *dir = p.workspace / JobDirName(p, id);
  std::error_code ec;
  if (fs::exists(fs::symlink_status(*dir, ec))) return "job directory " + dir->string() + " already exists";
  std::random_device rd;
  const fs::path tmp = p.workspace / (".tmp-job-" + std::to_string(rd()));
  fs::create_directory(tmp, ec);
  if (ec) return "cannot create " + tmp.string() + ": " + ec.message();
  std::string err;
  fs::create_directory_symlink(fs::path("..") / ".artifacts" / p.artifact_dir.filename(), tmp / "artifact", ec);
  if (!ec) fs::create_symlink(fs::path("..") / (JobDirName(p, id) + ".log"), tmp / "log", ec);
  if (ec) err = "cannot create links in " + tmp.string() + ": " + ec.message();
  if (err.empty()) {
    std::ofstream f(tmp / ".mt-launch.json");
    f << record.dump(2) << "\n";
    if (!f) err = "cannot write the launch record";
  }
  chmod(tmp.c_str(), 0777);   // the original makes job dirs a+w (shared across users' containers)
  if (err.empty()) {
    fs::rename(tmp, *dir, ec);
    if (ec) err = "cannot create " + dir->string() + ": " + ec.message();
  }
  if (!err.empty()) RemoveTree(tmp);
  return err;
}

static json Record(const Plan& p, const std::string& id) {
  return {{"backend", p.backend}, {"job_id", id}, {"job_name", p.job_name}, {"plan_sha256", p.hash},
          {"artifact", p.artifact_dir.string()}, {"created", p.created}};
}

// Best effort, as before: the job runs already; a record without its pgid only makes
// status and cancel see it as ended.
static void WriteRecord(const fs::path& dir, const json& record) {
  (void)base::WriteFileAtomic(dir / ".mt-launch.json", record.dump(2) + "\n");
}

void ResolveBinaries(PlanRequest* req) {
  req->mt_job = FindLauncherBinary("mt-job", "MT_JOB_BIN");
  req->simtrain = FindLauncherBinary("mt-simtrain", "MT_SIMTRAIN");
  req->mt_exporter = FindLauncherBinary("mt-exporter", "MT_EXPORTER_BIN");
  const char* prom = std::getenv("MT_PROMETHEUS_BIN");
  req->prometheus = FindOnPath(prom && *prom ? prom : "prometheus");
}

std::map<std::string, std::string> PlanFiles(const Plan& p) {
  std::map<std::string, std::string> files;
  if (p.binaries.count("mt-simtrain")) files["scenario.yaml"] = SimScenarioYaml(p);
  if (p.backend == "slurm") files["job.sbatch"] = SlurmBatchScript(p);
  if (p.backend == "k8s") files["job.k8s.yaml"] = RenderK8sManifest(p, {});
  return files;
}

static std::string SubmitLocal(const Plan& p, SubmitResult* r) {
  fs::path dir;
  json rec = Record(p, p.job_id);
  if (auto e = CreateJobDir(p, p.job_id, rec, &dir); !e.empty()) return e;
  const fs::path log = p.workspace / (JobDirName(p, p.job_id) + ".log");
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    RemoveTree(dir);
    return "cannot create " + log.string() + ": " + std::strerror(errno);
  }
  int fail[2];
  if (pipe2(fail, O_CLOEXEC) != 0) {
    close(fd);
    RemoveTree(dir);
    fs::remove(log);
    return "pipe failed";
  }
  std::vector<char*> argv;
  for (const auto& a : p.submit_argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // Double fork: the job's process is reparented to init, so a long-lived submitter (mt
  // serve, mt sweep) leaves no zombie behind, and a zombie never reads as a live process
  // group to JobStatus. The middle process leads the job's new session and process group
  // (pgid == its pid, which cancel signals) and exits at once.
  const pid_t pid = fork();
  if (pid == 0) {
    setsid();   // its own session and process group: cancel signals the whole group
    if (fork() != 0) _exit(0);
    dup2(fd, 1);
    dup2(fd, 2);
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    execv(argv[0], argv.data());
    const int e = errno;
    (void)!write(fail[1], &e, sizeof e);
    _exit(127);
  }
  close(fd);
  close(fail[1]);
  if (pid > 0) {
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
  }
  int child_errno = 0;
  const bool exec_failed = pid < 0 || read(fail[0], &child_errno, sizeof child_errno) == sizeof child_errno;
  close(fail[0]);
  if (exec_failed) {
    RemoveTree(dir);
    fs::remove(log);
    return "cannot start " + p.submit_argv[0] + ": " + std::strerror(pid < 0 ? errno : child_errno);
  }
  rec["pgid"] = pid;
  WriteRecord(dir, rec);
  r->job_id = p.job_id;
  r->job_dir = dir;
  r->log = log;
  return "";
}

static std::string SubmitSlurm(const Plan& p, SubmitResult* r) {
  auto sb = RunCapture(p.submit_argv, {}, 120);
  if (sb.status != 0) {
    const std::string why = !sb.error.empty() ? sb.error : Trim(sb.err.empty() ? sb.out : sb.err);
    return "sbatch failed (exit " + std::to_string(sb.status) + "): " + why;
  }
  static const std::regex kId(R"(^\s*(\d+)(;\S+)?\s*$)");
  std::smatch m;
  const std::string out = Trim(sb.out);
  if (!std::regex_match(out, m, kId)) return "sbatch printed no job id: '" + out + "'";
  const std::string id = m[1];
  fs::path dir;
  auto cancel = [&] { RunCapture({"scancel", id}, {}, 30); };
  if (auto e = CreateJobDir(p, id, Record(p, id), &dir); !e.empty()) return cancel(), e;
  // The job was submitted held, so its directory exists before any task can write into it.
  auto rel = RunCapture({"scontrol", "release", id}, {}, 60);
  if (rel.status != 0) {
    cancel();
    RemoveTree(dir);
    return "scontrol release " + id + " failed: " + Trim(rel.err + rel.out);
  }
  // Prolog kills end a job within seconds and before it writes a log (reference §7).
  const fs::path log = p.workspace / (JobDirName(p, id) + ".log");
  static const std::set<std::string> kDead = {"FAILED", "CANCELLED", "NODE_FAIL", "BOOT_FAIL", "TIMEOUT", "OUT_OF_MEMORY", "DEADLINE"};
  const double check_s = std::getenv("MT_PROLOG_CHECK_S") ? std::atof(std::getenv("MT_PROLOG_CHECK_S")) : 3.0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(check_s);
  while (std::chrono::steady_clock::now() < until) {
    const std::string st = Trim(RunCapture({"squeue", "-h", "-t", "all", "-j", id, "-o", "%T"}, {}, 10).out);
    if (kDead.count(st) && !fs::exists(log)) {
      RemoveTree(dir);
      return "[ERROR] Job " + id + " died in prolog before writing any log: " + st;
    }
    if (st == "RUNNING" || st == "COMPLETING" || st == "COMPLETED" || fs::exists(log)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  r->job_id = id;
  r->job_dir = dir;
  r->log = log;
  return "";
}

static std::string SubmitK8s(const Plan& p, SubmitResult* r) {
  if (FindOnPath("kubectl").empty())
    return "kubectl not found on PATH; `mt submit --backend k8s --dry-run --json` prints the rendered manifest";
  auto ap = RunCapture(p.submit_argv, {}, 120);
  if (ap.status != 0) return "kubectl apply failed (exit " + std::to_string(ap.status) + "): " + Trim(ap.err + ap.out + ap.error);
  fs::path dir;
  json rec = Record(p, p.job_id);
  rec["k8s_job"] = K8sJobName(p);
  if (auto e = CreateJobDir(p, p.job_id, rec, &dir); !e.empty()) {
    RunCapture({"kubectl", "delete", "job", K8sJobName(p)}, {}, 60);
    return e;
  }
  r->job_id = p.job_id;
  r->job_dir = dir;
  r->log = p.workspace / (JobDirName(p, p.job_id) + ".log");
  return "";
}

std::string Submit(const Plan& p, const std::vector<std::string>& submit_cmd, SubmitResult* r) {
  if (p.observe && p.backend == "local" && FirstFreePort(p.prometheus_port_first, p.prometheus_port_last) < 0)
    return "no free port for Prometheus in " + std::to_string(p.prometheus_port_first) + "-" +
           std::to_string(p.prometheus_port_last) + " (all taken)";
  if (auto e = CreateArtifact(p, submit_cmd, PlanFiles(p)); !e.empty()) return e;
  r->artifact = p.artifact_dir;
  std::string err = p.backend == "local" ? SubmitLocal(p, r) : p.backend == "slurm" ? SubmitSlurm(p, r) : SubmitK8s(p, r);
  if (!err.empty()) {
    RemoveTree(p.artifact_dir);
    std::error_code ec;
    fs::remove(p.artifact_dir.parent_path(), ec);   // .artifacts/ too, when this left it empty
  }
  return err;
}

// ---- job control ---------------------------------------------------------------------------

static std::string FindJob(const fs::path& ws, const std::string& job, fs::path* dir, json* rec) {
  if (job.empty() || job.find('/') != std::string::npos || job == "." || job == "..")
    return "bad job id '" + job + "'";
  std::error_code ec;
  if (!fs::is_directory(ws, ec)) return "workspace " + ws.string() + " does not exist";
  // One level, lstat types (base/workspace_files.h): a symlink anywhere in the workspace
  // (a loop, a link out of it) is never a job directory and never breaks the search.
  bool truncated = false;
  auto entries = base::ListDirectory(ws, 1000000, &truncated);
  if (!entries.ok()) return "cannot read workspace " + ws.string() + ": " + entries.message();
  std::vector<fs::path> hits;
  for (const auto& e : *entries) {
    const std::string& n = e.name;
    if (e.type != base::EntryType::kDirectory || !(n == job || n.rfind(job + "-", 0) == 0)) continue;
    if (base::LinkType(ws / n / ".mt-launch.json") != base::EntryType::kRegular) continue;
    hits.push_back(ws / n);
  }
  if (hits.empty()) return "no job '" + job + "' submitted by mt in " + ws.string();
  if (hits.size() > 1) return "job '" + job + "' is ambiguous (" + std::to_string(hits.size()) + " job directories)";
  *dir = hits[0];
  auto root = base::FileRoot::Make(*dir);
  if (!root.ok()) return "unreadable job directory " + dir->string() + ": " + root.message();
  auto text = base::ReadSmallFile(*root, *dir / ".mt-launch.json", 1 << 20);
  if (!text.ok()) return "unreadable launch record in " + dir->string() + ": " + text.message();
  try {
    *rec = json::parse(*text);
  } catch (const std::exception& e) {
    return "unreadable launch record in " + dir->string() + ": " + e.what();
  }
  return "";
}

// JOB SUMMARY status from the log's tail: "SUCCESS", "FAILED", with the exit code.
static bool SummaryFromLog(const fs::path& log, std::string* state, int* exit_code) {
  // A regular file only: a FIFO or device named like the log must not block or feed us.
  auto f = base::OpenRegularFile(nullptr, log);
  if (!f.ok()) return false;
  const uint64_t size = f->size(), from = size > 16384 ? size - 16384 : 0;
  std::string tail(static_cast<size_t>(size - from), '\0');
  const ssize_t got = ::pread(f->fd(), tail.data(), tail.size(), static_cast<off_t>(from));
  tail.resize(got > 0 ? static_cast<size_t>(got) : 0);
  static const std::regex kStatus(R"(Status:\s*(?:\x1b\[[0-9;]*m)?(SUCCESS|FAILED) \(exit (\d+)\))");
  std::smatch m;
  std::string::const_iterator it = tail.begin();
  bool found = false;
  while (std::regex_search(it, tail.cend(), m, kStatus)) {
    *exit_code = std::stoi(m[2]);
    *state = m[1] == "SUCCESS" ? "COMPLETED" : (*exit_code == 143 || *exit_code == 130) ? "CANCELLED" : "FAILED";
    found = true;
    it = m[0].second;
  }
  return found;
}

std::string JobStatus(const fs::path& ws, const std::string& job, json* out) {
  fs::path dir;
  json rec;
  if (auto e = FindJob(ws, job, &dir, &rec); !e.empty()) return e;
  const std::string id = rec.value("job_id", ""), backend = rec.value("backend", "");
  const fs::path log = ws / (dir.filename().string() + ".log");
  json s = {{"id", id}, {"backend", backend}, {"job_dir", dir.string()}, {"log", log.string()},
            {"state", "UNKNOWN"}, {"exit_code", nullptr}, {"source", "none"}};
  std::string state;
  int code = 0;
  if (backend == "local") {
    const int pgid = rec.value("pgid", 0);
    if (pgid > 0 && kill(-pgid, 0) == 0) {
      s["state"] = "RUNNING";
      s["source"] = "process group " + std::to_string(pgid);
    } else if (SummaryFromLog(log, &state, &code)) {
      s["state"] = state, s["exit_code"] = code, s["source"] = "JOB SUMMARY";
    } else {
      s["state"] = "ENDED_WITHOUT_SUMMARY", s["source"] = "process group gone";
    }
  } else if (backend == "slurm") {
    const std::string st = Trim(RunCapture({"squeue", "-h", "-t", "all", "-j", id, "-o", "%T"}, {}, 30).out);
    if (!st.empty()) s["state"] = st, s["source"] = "squeue";
    auto sc = RunCapture({"scontrol", "show", "job", id}, {}, 30);
    std::smatch m;
    static const std::regex kState(R"(JobState=(\S+))"), kExit(R"(ExitCode=(\d+):(\d+))");
    if (sc.status == 0 && std::regex_search(sc.out, m, kState)) {
      s["state"] = m[1].str(), s["source"] = "scontrol";
      if (std::regex_search(sc.out, m, kExit)) {
        const int rc = std::stoi(m[1]), sig = std::stoi(m[2]);
        if (s["state"] != "RUNNING" && s["state"] != "PENDING") s["exit_code"] = sig ? 128 + sig : rc;
      }
    } else if (st.empty()) {
      auto sa = RunCapture({"sacct", "-n", "-X", "-P", "-j", id, "-o", "State,ExitCode"}, {}, 30);
      const std::string line = Trim(sa.out);
      if (sa.status == 0 && !line.empty() && line.find("disabled") == std::string::npos) {
        s["state"] = line.substr(0, line.find_first_of("| ")), s["source"] = "sacct";
      } else if (SummaryFromLog(log, &state, &code)) {
        s["state"] = state, s["exit_code"] = code, s["source"] = "JOB SUMMARY";
      }
    }
  } else if (backend == "k8s") {
    if (FindOnPath("kubectl").empty()) {
      s["source"] = "kubectl not found";
    } else {
      auto k = RunCapture({"kubectl", "get", "job", rec.value("k8s_job", ""), "-o", "jsonpath={.status}"}, {}, 30);
      s["state"] = k.status == 0 ? Trim(k.out) : "UNKNOWN";
      s["source"] = "kubectl";
    }
  }
  *out = s;
  return "";
}

std::string CancelJob(const fs::path& ws, const std::string& job, std::string* message) {
  fs::path dir;
  json rec;
  if (auto e = FindJob(ws, job, &dir, &rec); !e.empty()) return e;
  const std::string id = rec.value("job_id", ""), backend = rec.value("backend", "");
  if (backend == "local") {
    const int pgid = rec.value("pgid", 0);
    if (pgid <= 0 || kill(-pgid, 0) != 0) return "job " + id + " is not running";
    if (kill(-pgid, SIGTERM) != 0) return "cannot signal process group " + std::to_string(pgid) + ": " + std::strerror(errno);
    *message = "sent SIGTERM to job " + id + " (process group " + std::to_string(pgid) + ")";
    return "";
  }
  if (backend == "slurm") {
    auto r = RunCapture({"scancel", id}, {}, 60);
    if (r.status != 0) return "scancel " + id + " failed: " + Trim(r.err + r.out + r.error);
    *message = "scancel " + id + " done";
    return "";
  }
  if (backend == "k8s") {
    auto r = RunCapture({"kubectl", "delete", "job", rec.value("k8s_job", "")}, {}, 60);
    if (r.status != 0) return "kubectl delete failed: " + Trim(r.err + r.out + r.error);
    *message = Trim(r.out);
    return "";
  }
  return "unknown backend '" + backend + "' in the launch record";
}

}  // namespace mt::launch
