#include "launcher/launch/job_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <regex>

#include "base/atomic_file.h"
#include "base/strings.h"
#include "base/workspace_files.h"
#include "launcher/launch/artifact.h"

namespace mt::launch {
namespace fs = std::filesystem;
using base::Errc;
using base::Status;
using nlohmann::json;

std::string TrimOutput(const std::string& s) { return std::string(base::Trim(s)); }

json LaunchRecordJson(const Plan& p, const std::string& id) {
  return {{"backend", p.backend}, {"job_id", id}, {"job_name", p.job_name}, {"plan_sha256", p.hash},
          {"artifact", p.artifact_dir.string()}, {"created", p.created}};
}

void WriteLaunchRecord(const fs::path& dir, const json& record) {
  (void)base::WriteFileAtomic(dir / ".mt-launch.json", record.dump(2) + "\n");
}

Status CreateJobDir(const Plan& p, const std::string& id, const json& record, fs::path* dir) {
  *dir = p.workspace / JobDirName(p, id);
  std::error_code ec;
  if (fs::exists(fs::symlink_status(*dir, ec)))
    return Status(Errc::kConflict, "job directory " + dir->string() + " already exists");
  std::random_device rd;
  const fs::path tmp = p.workspace / (".tmp-job-" + std::to_string(rd()));
  fs::create_directory(tmp, ec);
  if (ec) return base::StatusOf(ec, "cannot create " + tmp.string());
  Status st;
  fs::create_directory_symlink(fs::path("..") / ".artifacts" / p.artifact_dir.filename(), tmp / "artifact", ec);
  if (!ec) fs::create_symlink(fs::path("..") / (JobDirName(p, id) + ".log"), tmp / "log", ec);
  if (ec) st = base::StatusOf(ec, "cannot create links in " + tmp.string());
  if (st.ok()) {
    std::ofstream f(tmp / ".mt-launch.json");
    f << record.dump(2) << "\n";
    if (!f) st = Status(Errc::kIo, "cannot write the launch record in " + tmp.string());
  }
  chmod(tmp.c_str(), 0777);   // the original makes job dirs a+w (shared across users' containers)
  if (st.ok()) {
    fs::rename(tmp, *dir, ec);
    if (ec) st = base::StatusOf(ec, "cannot create " + dir->string());
  }
  if (!st.ok()) RemoveTree(tmp);
  return st;
}

bool SummaryFromLog(const fs::path& log, std::string* state, int* exit_code) {
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

}  // namespace mt::launch
