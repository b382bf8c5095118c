#include "launcher/launch/submit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/workspace_files.h"
#include "launcher/launch/artifact.h"
#include "launcher/launch/backend.h"
#include "launcher/launch/job_dir.h"
#include "launcher/launch/process.h"

namespace mt::launch {
namespace fs = std::filesystem;
using base::Errc;
using base::Status;
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
  if (const Backend* b = FindBackend(p.backend)) b->AddPlanFiles(p, &files);
  return files;
}

Status Submit(const Plan& p, const std::vector<std::string>& submit_cmd, SubmitResult* r) {
  if (p.observe && p.backend == "local" && FirstFreePort(p.prometheus_port_first, p.prometheus_port_last) < 0)
    return Status(Errc::kFailed, "no free port for Prometheus in " + std::to_string(p.prometheus_port_first) + "-" +
           std::to_string(p.prometheus_port_last) + " (all taken)");
  const Backend* backend = FindBackend(p.backend);
  if (backend == nullptr) return Status(Errc::kInvalid, "unknown backend '" + p.backend + "' (" + BackendNamesText() + ")");
  if (Status st = CreateArtifact(p, submit_cmd, PlanFiles(p)); !st.ok()) return st;
  r->artifact = p.artifact_dir;
  Status st = backend->Submit(p, r);
  if (!st.ok()) {
    RemoveTree(p.artifact_dir);
    std::error_code ec;
    fs::remove(p.artifact_dir.parent_path(), ec);   // .artifacts/ too, when this left it empty
  }
  return st;
}

// ---- job control ---------------------------------------------------------------------------

static Status FindJob(const fs::path& ws, const std::string& job, fs::path* dir, json* rec) {
  if (job.empty() || job.find('/') != std::string::npos || job == "." || job == "..")
    return Status(Errc::kInvalid, "bad job id '" + job + "'");
  std::error_code ec;
  if (!fs::is_directory(ws, ec)) return Status(Errc::kNotFound, "workspace " + ws.string() + " does not exist");
  // One level, lstat types (base/workspace_files.h): a symlink anywhere in the workspace
  // (a loop, a link out of it) is never a job directory and never breaks the search.
  bool truncated = false;
  auto entries = base::ListDirectory(ws, 1000000, &truncated);
  if (!entries.ok()) return entries.status().In("cannot read workspace " + ws.string());
  std::vector<fs::path> hits;
  for (const auto& e : *entries) {
    const std::string& n = e.name;
    if (e.type != base::EntryType::kDirectory || !(n == job || n.rfind(job + "-", 0) == 0)) continue;
    if (base::LinkType(ws / n / ".mt-launch.json") != base::EntryType::kRegular) continue;
    hits.push_back(ws / n);
  }
  if (hits.empty()) return Status(Errc::kNotFound, "no job '" + job + "' submitted by mt in " + ws.string());
  if (hits.size() > 1) return Status(Errc::kInvalid, "job '" + job + "' is ambiguous (" + std::to_string(hits.size()) + " job directories)");
  *dir = hits[0];
  auto root = base::FileRoot::Make(*dir);
  if (!root.ok()) return root.status().In("unreadable job directory " + dir->string());
  auto text = base::ReadSmallFile(*root, *dir / ".mt-launch.json", 1 << 20);
  if (!text.ok()) return text.status().In("unreadable launch record in " + dir->string());
  try {
    *rec = json::parse(*text);
  } catch (const std::exception& e) {
    return Status(Errc::kInvalid, "unreadable launch record in " + dir->string() + ": " + e.what());
  }
  return Status::Ok();
}

Status JobStatus(const fs::path& ws, const std::string& job, json* out) {
  fs::path dir;
  json rec;
  if (Status st = FindJob(ws, job, &dir, &rec); !st.ok()) return st;
  LaunchedJob j{rec.value("job_id", ""), dir, ws / (dir.filename().string() + ".log"), rec};
  const std::string backend = rec.value("backend", "");
  json s = {{"id", j.id}, {"backend", backend}, {"job_dir", dir.string()}, {"log", j.log.string()},
            {"state", "UNKNOWN"}, {"exit_code", nullptr}, {"source", "none"}};
  if (const Backend* b = FindBackend(backend)) b->FillStatus(j, &s);
  else s["source"] = "unknown backend '" + backend + "' in the launch record";
  *out = s;
  return Status::Ok();
}

Status CancelJob(const fs::path& ws, const std::string& job, std::string* message) {
  fs::path dir;
  json rec;
  if (Status st = FindJob(ws, job, &dir, &rec); !st.ok()) return st;
  const std::string backend = rec.value("backend", "");
  const Backend* b = FindBackend(backend);
  if (b == nullptr) return Status(Errc::kInvalid, "unknown backend '" + backend + "' in the launch record");
  return b->Cancel({rec.value("job_id", ""), dir, ws / (dir.filename().string() + ".log"), rec}, message);
}

}  // namespace mt::launch
