#include "tools/logs/workspace.h"

#include <algorithm>
#include <map>
#include <cerrno>
#include <system_error>

#include <re2/re2.h>

#include "base/workspace_files.h"

namespace mt::tools {
namespace fs = std::filesystem;
namespace {

constexpr size_t kMaxListedFiles = 512;   // rank logs, ray worker logs per job
constexpr size_t kMaxSpec = 1024;

bool IsLogName(const std::string& name) {
  return name.size() > 4 && (name.ends_with(".log") || name.ends_with(".out") || name.ends_with(".err"));
}

std::string StemOf(const std::string& name) {
  return IsLogName(name) ? name.substr(0, name.size() - 4) : name;
}

// Which of a job's log files is its main log: .log, then .out, then a lone .err.
int LogRank(const fs::path& p) {
  const auto ext = p.extension();
  return ext == ".log" ? 0 : ext == ".out" ? 1 : 2;
}

// The job id of an entry of the workspace root: a directory by our launcher's convention, a
// log file by any of the output patterns.
std::optional<JobId> IdOfEntry(const std::string& name) {
  return IsLogName(name) ? ParseLogName(StemOf(name)) : ParseJobId(name);
}

// Never throw, never block: lstat/stat only (base/workspace_files.h).
bool IsDir(const fs::path& p) { return base::TargetType(p) == base::EntryType::kDirectory; }

bool IsRegular(const fs::path& p) { return base::TargetType(p) == base::EntryType::kRegular; }

bool SymlinkExists(const fs::path& p) { return base::LinkType(p) != base::EntryType::kNone; }

// Sorted entry names of a directory (empty on error; the first million on a huge one).
std::vector<std::string> Names(const fs::path& dir) {
  constexpr size_t kMaxNames = 1000000;
  std::vector<std::string> out;
  bool truncated = false;
  auto entries = base::ListDirectory(dir, kMaxNames, &truncated);
  if (!entries.ok()) return out;
  for (auto& e : *entries) out.push_back(std::move(e.name));
  return out;
}

bool LooksLikeUlid(const std::string& n) {
  if (n.size() != 26) return false;
  for (char c : n)
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z'))) return false;
  return true;
}

// Orders ids numerically when both are numbers.
bool IdLess(const JobFiles& a, const JobFiles& b) {
  bool an = !a.id.empty() && std::all_of(a.id.begin(), a.id.end(), ::isdigit);
  bool bn = !b.id.empty() && std::all_of(b.id.begin(), b.id.end(), ::isdigit);
  if (an && bn && a.id.size() != b.id.size()) return a.id.size() < b.id.size();
  if (an != bn) return an;
  if (a.id != b.id) return a.id < b.id;
  return a.name < b.name;
}

// Shared by the confined (workspace) and unconfined (given log file) views.
struct Finder {
  fs::path root;
  const Workspace* ws = nullptr;   // null: no confinement

  std::optional<fs::path> Safe(const fs::path& p) const {
    if (!ws) {
      std::error_code ec;
      auto c = fs::canonical(p, ec);
      if (ec) return std::nullopt;
      return c;
    }
    try {
      return ws->Confine(p);
    } catch (const WorkspaceError&) {
      return std::nullopt;
    }
  }

  std::string Display(const fs::path& p) const {
    if (ws) return ws->Relative(p);
    return p.string();
  }

  void FillDir(JobFiles* j, const fs::path& dir) const {
    j->dir = dir;
    j->dir_display = Display(dir);
    // k8s rank logs.
    std::vector<std::pair<long, fs::path>> ranks;
    for (const auto& n : Names(dir)) {
      if (n.starts_with("rank-") && n.ends_with(".log")) {
        std::string num = n.substr(5, n.size() - 9);
        if (num.empty() || num.size() > 6 || !std::all_of(num.begin(), num.end(), ::isdigit)) continue;
        if (auto p = Safe(dir / n); p && IsRegular(*p)) ranks.emplace_back(std::stol(num), *p);
      }
      if (ranks.size() >= kMaxListedFiles) break;
    }
    std::sort(ranks.begin(), ranks.end());
    for (auto& [n, p] : ranks) j->rank_logs.push_back(p);
    // Ray worker logs: ray_logs/<host>/worker*.out|.err, or …/session_*/logs/worker*.
    fs::path ray = dir / "ray_logs";
    if (IsDir(ray)) {
      for (const auto& host : Names(ray)) {
        std::vector<fs::path> places = {ray / host};
        for (const auto& s : Names(ray / host))
          if (s.starts_with("session_")) places.push_back(ray / host / s / "logs");
        for (const auto& place : places)
          for (const auto& n : Names(place))
            if (n.starts_with("worker") && (n.ends_with(".out") || n.ends_with(".err")) &&
                j->ray_worker_logs.size() < kMaxListedFiles)
              if (auto p = Safe(place / n); p && IsRegular(*p)) j->ray_worker_logs.push_back(*p);
      }
    }
    fs::path prom = dir / "prometheus";
    if (IsDir(prom))
      for (const auto& n : Names(prom))
        if (n == "wal" || LooksLikeUlid(n)) j->has_tsdb = true;
  }

  void SetLog(JobFiles* j, const fs::path& log) const {
    j->log = log;
    j->log_display = Display(log);
  }

  JobFiles FromDir(const fs::path& dir) const {
    JobFiles j;
    std::string dname = dir.filename().string();
    if (auto id = ParseJobId(dname)) {
      j.id = id->id;
      j.kind = id->kind;
      j.name = StripTgsTag(id->rest);
    } else {
      j.kind = "unknown";
      j.name = dname;
    }
    FillDir(&j, dir);
    // 1. The `log` link. 2. <parent>/<dirname>*.log|.out. 3. <parent>/<id>-*.log|.out.
    if (auto p = Safe(dir / "log"); p && IsRegular(*p)) {
      SetLog(&j, *p);
      return j;
    }
    fs::path parent = dir.parent_path();
    auto names = Names(parent);
    for (int pass = 0; pass < 2 && j.log.empty(); ++pass) {
      std::string prefix = pass == 0 ? dname : (j.id.empty() ? std::string() : j.id + "-");
      if (prefix.empty()) continue;
      for (const auto& n : names)
        if (IsLogName(n) && n.starts_with(prefix))
          if (auto p = Safe(parent / n); p && IsRegular(*p)) {
            SetLog(&j, *p);
            break;
          }
    }
    return j;
  }

  // <stem>.err beside a .out or .log: Slurm's separate stderr.
  void SetErrLog(JobFiles* j) const {
    if (j->log.empty() || j->log.extension() == ".err") return;
    if (auto p = Safe(j->log.parent_path() / (StemOf(j->log.filename().string()) + ".err")); p && IsRegular(*p)) {
      j->err_log = *p;
      j->err_log_display = Display(*p);
    }
  }

  JobFiles FromLog(const fs::path& log) const {
    JobFiles j;
    std::string stem = StemOf(log.filename().string());
    if (auto id = ParseLogName(stem)) {
      j.id = id->id;
      j.kind = id->kind;
      j.name = StripTgsTag(id->rest);
    } else {
      j.kind = "unknown";
      j.name = stem;
    }
    SetLog(&j, log);
    SetErrLog(&j);
    fs::path parent = log.parent_path();
    // 1. <stem>/  2. <stem without TGS tag>/  3. the first <id>-*/ directory.
    std::vector<fs::path> candidates = {parent / stem, parent / StripTgsTag(stem)};
    if (!j.id.empty())
      for (const auto& n : Names(parent))
        if (n.starts_with(j.id + "-") && !IsLogName(n)) candidates.push_back(parent / n);
    for (const auto& c : candidates)
      if (auto p = Safe(c); p && IsDir(*p)) {
        FillDir(&j, *p);
        break;
      }
    return j;
  }
};

JobLocator& Locator() {
  static JobLocator locator;
  return locator;
}

}  // namespace

void Workspace::SetJobLocator(JobLocator locator) { Locator() = std::move(locator); }

std::optional<JobId> ParseJobId(std::string_view name) {
  static const RE2 kRe(R"(^(k8s-\d+-\d+-[0-9a-f]+|local_[0-9_]+[0-9a-f]+|\d+)-(.+)$)");
  std::string id, rest;
  if (!RE2::FullMatch(name, kRe, &id, &rest)) return std::nullopt;
  JobId out;
  out.kind = id.starts_with("k8s-") ? "k8s" : id.starts_with("local_") ? "local" : "slurm";
  out.id = std::move(id);
  out.rest = std::move(rest);
  return out;
}

std::optional<JobId> ParseLogName(std::string_view stem) {
  if (auto id = ParseJobId(stem)) return id;
  // Slurm's %j / %A_%a, after "slurm-" (its default), after "<job name>-" (%x-%j), or alone.
  static const RE2 kSlurm(R"(^(?:(.+)-)?(\d+(?:_\d+)?)$)");
  std::string name, id;
  if (!RE2::FullMatch(stem, kSlurm, &name, &id)) return std::nullopt;
  return JobId{id, "slurm", name};
}

std::string StripTgsTag(std::string_view stem) {
  static const RE2 kRe(R"(^(.*?)-(?:[A-Z][A-Z0-9]*-)?\d+N-(?:pdbs[0-9.]+-)?TGS_[0-9.]+$)");
  std::string base;
  if (RE2::FullMatch(stem, kRe, &base)) return base;
  return std::string(stem);
}

Workspace::Workspace(const fs::path& root) {
  std::error_code ec;
  root_ = fs::canonical(root, ec);
  if (ec || !IsDir(root_))
    throw WorkspaceError(WorkspaceError::Code::kNoWorkspace,
                         "workspace " + root.string() + " is not a readable directory" +
                             (ec ? " (" + ec.message() + ")" : std::string()) +
                             "; pass --workspace DIR or set `workspace:` in configs/mt.yaml");
}

fs::path Workspace::Confine(const fs::path& p) const {
  std::error_code ec;
  fs::path c = fs::canonical(p, ec);
  if (ec) {
    if (ec.value() == ELOOP)
      throw WorkspaceError(WorkspaceError::Code::kInvalid, Relative(p) + ": symbolic link loop");
    if (ec.value() == ENOENT || ec.value() == ENOTDIR)
      throw WorkspaceError(WorkspaceError::Code::kNotFound, Relative(p) + " does not exist");
    throw WorkspaceError(WorkspaceError::Code::kInvalid, Relative(p) + ": " + ec.message());
  }
  fs::path rel = c.lexically_relative(root_);
  if (rel.empty() || *rel.begin() == "..")
    throw WorkspaceError(WorkspaceError::Code::kEscapes,
                         Relative(p) + " resolves to " + c.string() +
                             ", outside the workspace; only files inside " + root_.string() +
                             " can be read");
  return c;
}

std::string Workspace::Relative(const fs::path& p) const {
  fs::path rel = p.lexically_relative(root_);
  if (rel.empty() || *rel.begin() == "..") return p.string();
  return rel.string();
}

JobFiles Workspace::FromLog(const fs::path& log) const { return Finder{root_, this}.FromLog(log); }
JobFiles Workspace::FromDir(const fs::path& dir) const { return Finder{root_, this}.FromDir(dir); }

std::vector<JobFiles> Workspace::List(std::vector<std::string>* warnings) const {
  return ListMatching("", warnings);
}

std::vector<JobFiles> Workspace::ListId(const std::string& id) const { return ListMatching(id, nullptr); }

std::vector<JobFiles> Workspace::ListMatching(const std::string& only_id, std::vector<std::string>* warnings) const {
  Finder f{root_, this};
  struct Found {
    std::vector<fs::path> dirs, logs;
  };
  std::map<std::string, Found> by_id;
  for (const auto& n : Names(root_)) {
    if (!only_id.empty() && n.find(only_id) == std::string::npos) continue;
    auto id = IdOfEntry(n);
    if (!id || (!only_id.empty() && id->id != only_id && !id->id.starts_with(only_id + "_"))) continue;
    fs::path p = root_ / n;
    std::optional<fs::path> safe;
    try {
      safe = Confine(p);
    } catch (const WorkspaceError& e) {
      if (warnings) warnings->push_back(std::string("skipped ") + n + ": " + e.what());
      continue;
    }
    if (IsDir(*safe)) {
      // A directory without a `log` entry is a checkpoint directory, not a job.
      if (SymlinkExists(p / "log")) by_id[id->id].dirs.push_back(p);
    } else if (IsLogName(n) && IsRegular(*safe)) {
      by_id[id->id].logs.push_back(*safe);
    }
  }
  std::vector<JobFiles> jobs;
  for (auto& [id, found] : by_id) {
    JobFiles j;
    // Prefer .log over legacy .out, a lone .err last, then the name order.
    std::stable_sort(found.logs.begin(), found.logs.end(),
                     [](const fs::path& a, const fs::path& b) { return LogRank(a) < LogRank(b); });
    if (!found.dirs.empty()) {
      j = f.FromDir(found.dirs.front());
      if (j.log.empty() && !found.logs.empty()) f.SetLog(&j, found.logs.front());
      f.SetErrLog(&j);
    } else {
      j = f.FromLog(found.logs.front());
    }
    jobs.push_back(std::move(j));
  }
  std::sort(jobs.begin(), jobs.end(), IdLess);
  return jobs;
}

JobFiles Workspace::Resolve(std::string_view spec) const {
  using Code = WorkspaceError::Code;
  std::string s(spec);
  if (s.empty()) throw WorkspaceError(Code::kInvalid, "empty job: give a job id (e.g. 7877), a job directory or a log file name");
  if (s.size() > kMaxSpec) throw WorkspaceError(Code::kInvalid, "job name longer than 1024 bytes");
  if (s.find('\0') != std::string::npos) throw WorkspaceError(Code::kInvalid, "job name contains a NUL byte");
  fs::path sp(s);
  if (sp.is_absolute())
    throw WorkspaceError(Code::kEscapes, "'" + s + "' is an absolute path; name the job by id, directory or log file relative to the workspace");
  for (const auto& part : sp)
    if (part == "..")
      throw WorkspaceError(Code::kEscapes, "'" + s + "' contains '..'; jobs are named relative to the workspace and cannot leave it");
  while (!s.empty() && s.back() == '/') s.pop_back();

  // A bare id.
  static const RE2 kIdOnly(R"(^(k8s-\d+-\d+-[0-9a-f]+|local_[0-9_]+[0-9a-f]+|\d+(?:_\d+)?)$)");
  if (RE2::FullMatch(s, kIdOnly)) {
    std::vector<std::string> tasks;   // an array job's tasks "<s>_<n>"
    for (auto& j : ListId(s)) {
      if (j.id == s) return j;
      if (j.id.starts_with(s + "_")) tasks.push_back(j.id);
    }
    if (tasks.empty() && Locator())
      if (auto j = LocateById(s)) return *j;
    if (!tasks.empty()) {
      std::string list;
      for (size_t i = 0; i < tasks.size() && i < 5; ++i) list += (i ? ", " : "") + tasks[i];
      throw WorkspaceError(Code::kAmbiguous, "job " + s + " is an array of " + std::to_string(tasks.size()) + " tasks (" + list +
                                                 (tasks.size() > 5 ? ", …" : "") + "); name one task, e.g. " + tasks.front());
    }
    throw WorkspaceError(Code::kNotFound, "no job " + s + " in workspace " + root_.string() + " (list_jobs shows the jobs it has)");
  }
  fs::path p = root_ / sp;
  if (SymlinkExists(p)) {
    fs::path c = Confine(p);
    Finder f{root_, this};
    if (IsDir(c)) {
      if (!SymlinkExists(c / "log") && !ParseJobId(c.filename().string()))
        throw WorkspaceError(Code::kNotFound, "'" + s + "' is a directory without a `log` link: a checkpoint directory, not a job");
      return f.FromDir(c);
    }
    if (IsRegular(c)) return f.FromLog(c);
    throw WorkspaceError(Code::kInvalid, "'" + s + "' is neither a log file nor a job directory");
  }
  // A unique prefix of a job's directory or log name.
  std::vector<JobFiles> matches;
  for (auto& j : List()) {
    std::string dname = j.dir.empty() ? std::string() : j.dir.filename().string();
    std::string lname = j.log.empty() ? std::string() : j.log.filename().string();
    if ((!dname.empty() && dname.starts_with(s)) || (!lname.empty() && lname.starts_with(s)))
      matches.push_back(std::move(j));
  }
  if (matches.size() == 1) return matches.front();
  if (matches.empty())
    throw WorkspaceError(Code::kNotFound, "no job matches '" + s + "' in workspace " + root_.string() + " (list_jobs shows the jobs it has)");
  std::string ids;
  for (size_t i = 0; i < matches.size() && i < 5; ++i) ids += (i ? ", " : "") + matches[i].id;
  throw WorkspaceError(Code::kAmbiguous, "'" + s + "' matches " + std::to_string(matches.size()) + " jobs (" + ids + (matches.size() > 5 ? ", …" : "") + "); give the full id");
}

std::optional<JobFiles> Workspace::LocateById(const std::string& id) const {
  const std::vector<fs::path> paths = Locator()(id);
  std::vector<fs::path> inside;
  std::string outside;
  for (const auto& p : paths) {
    if (!IsRegular(p)) continue;
    try {
      inside.push_back(Confine(p));
    } catch (const WorkspaceError&) {
      outside = p.string();
    }
  }
  if (inside.empty()) {
    if (outside.empty()) return std::nullopt;
    throw WorkspaceError(WorkspaceError::Code::kEscapes,
                         "Slurm records job " + id + "'s output at " + outside + ", outside the workspace " + root_.string() +
                             "; only files inside it can be read (configure that directory as the workspace)");
  }
  Finder f{root_, this};
  JobFiles j = f.FromLog(inside.front());
  j.id = id;
  j.kind = "slurm";
  if (inside.size() > 1 && inside[1] != inside[0]) {
    j.err_log = inside[1];
    j.err_log_display = Relative(inside[1]);
  }
  return j;
}

JobFiles DescribeLogFile(const fs::path& log) {
  std::error_code ec;
  fs::path abs = fs::absolute(log, ec);
  if (ec) abs = log;
  Finder f{abs.parent_path(), nullptr};
  JobFiles j = f.FromLog(abs);
  j.log_display = log.string();
  return j;
}

}  // namespace mt::tools
