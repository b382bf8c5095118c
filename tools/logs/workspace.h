// The job workspace: the directory tree the launcher writes (reference/maxtext-slurm.md
// §2), and how a job named by a user or an agent is found in it.
//
//   <ws>/<id>-<JOB_NAME>[-<tgs tag>].log|.out     the job log (all ranks, srun -l)
//   <ws>/<id>-<JOB_NAME>/                          the job directory, with a `log` symlink
//   <ws>/<model or alias>/                          a shared checkpoint dir: no `log`, not a job
//
// Logs written without our launcher are jobs too, named as Slurm's --output/--error
// patterns name them: slurm-%j.out (the default), slurm-%A_%a.out (array tasks, id
// "<array>_<task>"), %x-%j.out (job name, then id), %j.out; a %j.err beside the .out is the
// job's stderr and is triaged with it.
//
// Job ids: Slurm "7877", local "local_20260224_190000_a3f1", k8s "k8s-20260224-190000-a3f1".
// A job can be named by id, by its directory, by its log file (name or workspace-relative
// path), or by a unique prefix of its directory/log name. Nothing outside the workspace is
// ever resolved: absolute paths, ".." and symlinks that lead out are refused.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mt::tools {

class WorkspaceError : public std::runtime_error {
 public:
  enum class Code { kNoWorkspace, kInvalid, kEscapes, kNotFound, kAmbiguous };
  WorkspaceError(Code code, const std::string& what) : std::runtime_error(what), code_(code) {}
  Code code() const { return code_; }

 private:
  Code code_;
};

struct JobFiles {
  std::string id;                        // "7877", "local_…", "k8s-…"; empty if unknown
  std::string kind;                      // slurm | local | k8s | unknown
  std::string name;                      // JOB_NAME from the file name, TGS tag stripped
  std::filesystem::path log;             // absolute; empty when the job has no log (yet)
  std::filesystem::path dir;             // absolute; empty when there is no job directory
  std::vector<std::filesystem::path> rank_logs;   // k8s <dir>/rank-N.log, by N
  std::vector<std::filesystem::path> ray_worker_logs;  // <dir>/ray_logs/<host>/worker*.out|.err
  std::filesystem::path err_log;         // Slurm's separate stderr (<stem>.err beside <stem>.out)
  bool has_tsdb = false;                 // <dir>/prometheus holds blocks or a wal
  std::string log_display;               // workspace-relative (or as given) for output
  std::string dir_display;
  std::string err_log_display;
};

// Id and kind at the start of a file or directory name ("7877-JAX-x" → {"7877","slurm"}).
struct JobId {
  std::string id;
  std::string kind;
  std::string rest;   // what follows "<id>-"
};
std::optional<JobId> ParseJobId(std::string_view name);

// Id, kind and job name of a log file's stem (its name without .log/.out/.err): our
// launcher's "<id>-<name>" first, then the Slurm output patterns above ("slurm-102" →
// {"102", "slurm", "slurm"}, "train-200_3" → {"200_3", "slurm", "train"}, "102").
std::optional<JobId> ParseLogName(std::string_view stem);

// Removes a tgs_tagger suffix: "-[<QUANT>-]<N>N-[pdbs<X>-]TGS_<value>".
std::string StripTgsTag(std::string_view stem);

// Where the scheduler says a job writes its output, for a job id no file name in the
// workspace matches (e.g. `sbatch -o runs/train.txt`): absolute paths, stdout first then
// stderr; empty when the scheduler does not know the job or is not reachable.
using JobLocator = std::function<std::vector<std::filesystem::path>(const std::string& id)>;

class Workspace {
 public:
  // The process's locator (the CLI and the server install the Slurm one at start-up; none by
  // default). What it names is still confined to the workspace.
  static void SetJobLocator(JobLocator locator);

  // Throws WorkspaceError(kNoWorkspace) when `root` is not a readable directory.
  explicit Workspace(const std::filesystem::path& root);

  const std::filesystem::path& root() const { return root_; }

  // Every job, sorted by id (numeric ids by value) then name. Entries that cannot be
  // read or that point outside the workspace are skipped and described in `warnings`.
  std::vector<JobFiles> List(std::vector<std::string>* warnings = nullptr) const;
  // Only the jobs with this id, and the tasks "<id>_<n>" of an array job (cheaper than
  // List() on a big workspace).
  std::vector<JobFiles> ListId(const std::string& id) const;

  // Finds one job. Throws WorkspaceError with a message that says what to do.
  JobFiles Resolve(std::string_view spec) const;

  // `p` with symlinks resolved, if it stays inside the workspace; throws kEscapes (or
  // kNotFound when it does not exist; a symlink loop is reported as such).
  std::filesystem::path Confine(const std::filesystem::path& p) const;

  // Workspace-relative form of an absolute path inside it.
  std::string Relative(const std::filesystem::path& p) const;

  // Describes the job of a log or a job directory that was already confined.
  JobFiles FromLog(const std::filesystem::path& log) const;
  JobFiles FromDir(const std::filesystem::path& dir) const;

 private:
  std::vector<JobFiles> ListMatching(const std::string& only_id, std::vector<std::string>* warnings) const;
  // The job the locator places inside the workspace; nullopt when it knows nothing that
  // exists; throws kEscapes when what it names lies outside.
  std::optional<JobFiles> LocateById(const std::string& id) const;
  std::filesystem::path root_;   // canonical
};

// The job of a log file given directly (CLI `mt triage path/to.log`): no workspace
// confinement, sibling directory `<stem>/` (TGS tag tolerated) when present.
JobFiles DescribeLogFile(const std::filesystem::path& log);

}  // namespace mt::tools
