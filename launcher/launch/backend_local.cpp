// The local backend: mt-job in its own session and process group on this host.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

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

class LocalBackend : public Backend {
 public:
  std::string name() const override { return "local"; }
  std::string JobIdBeforeSubmit(const Plan& p, const std::string& rand_hex) const override {
    return "local_" + p.created + "_" + rand_hex;
  }
  std::vector<std::string> SubmitCommand(const Plan& p) const override {
    return {p.binaries.at("mt-job"), "run", (p.artifact_dir / "plan.json").string()};
  }

  Status Submit(const Plan& p, SubmitResult* r) const override {
    fs::path dir;
    json rec = LaunchRecordJson(p, p.job_id);
    if (Status st = CreateJobDir(p, p.job_id, rec, &dir); !st.ok()) return st;
    const fs::path log = p.workspace / (JobDirName(p, p.job_id) + ".log");
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
      const base::Status st = base::StatusOfErrno(errno, "cannot create " + log.string());   // before RemoveTree resets errno
      RemoveTree(dir);
      return st;
    }
    int fail[2];
    if (pipe2(fail, O_CLOEXEC) != 0) {
      close(fd);
      RemoveTree(dir);
      fs::remove(log);
      return Status(Errc::kIo, "cannot create a pipe to start the job");
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
      // A mask survives exec: `mt serve` blocks SIGTERM in every thread (it sigwait()s), and
      // a job started with it blocked would never see its cancel.
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
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
      return Status(Errc::kFailed, "cannot start " + p.submit_argv[0] + ": " + std::strerror(pid < 0 ? errno : child_errno));
    }
    rec["pgid"] = pid;
    WriteLaunchRecord(dir, rec);
    r->job_id = p.job_id;
    r->job_dir = dir;
    r->log = log;
    return Status::Ok();
  }

  void FillStatus(const LaunchedJob& job, json* s) const override {
    const int pgid = job.record.value("pgid", 0);
    std::string state;
    int code = 0;
    if (pgid > 0 && kill(-pgid, 0) == 0) {
      (*s)["state"] = "RUNNING";
      (*s)["source"] = "process group " + std::to_string(pgid);
    } else if (SummaryFromLog(job.log, &state, &code)) {
      (*s)["state"] = state, (*s)["exit_code"] = code, (*s)["source"] = "JOB SUMMARY";
    } else {
      (*s)["state"] = "ENDED_WITHOUT_SUMMARY", (*s)["source"] = "process group gone";
    }
  }

  Status Cancel(const LaunchedJob& job, std::string* message) const override {
    const int pgid = job.record.value("pgid", 0);
    if (pgid <= 0 || kill(-pgid, 0) != 0) return Status(Errc::kConflict, "job " + job.id + " is not running");
    if (kill(-pgid, SIGTERM) != 0) return Status(Errc::kFailed, "cannot signal process group " + std::to_string(pgid) + ": " + std::strerror(errno));
    *message = "sent SIGTERM to job " + job.id + " (process group " + std::to_string(pgid) + ")";
    return Status::Ok();
  }
};

}  // namespace

const Backend& LocalBackendInstance() {
  static const LocalBackend b;
  return b;
}

}  // namespace mt::launch
