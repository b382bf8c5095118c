// Confined, bounded access to the files of a workspace: the one way mt reads a job's logs,
// TSDB blocks and artifacts, and writes its reports there.
//
// Why: a workspace is shared and writable by many people (and by the jobs themselves), so
// its content is input from strangers. Hardening issue #14 showed what a naive reader does
// with it: a FIFO named meta.json blocks open() forever, a symlink to /dev/zero is read
// without end, a block directory that links to /etc is copied and served, a 2 GB line
// costs 4 GB of memory, a symlink loop breaks a directory walk. Every function here
// therefore:
//
//  - opens for reading only regular files: stat first (a device is never even opened),
//    then open(O_RDONLY|O_NONBLOCK|O_NOCTTY|O_CLOEXEC) — O_NONBLOCK so that a FIFO swapped
//    in between cannot block — then fstat S_ISREG on the descriptor;
//  - accepts a path only if its real path (all symlinks resolved) is inside the root
//    (FileRoot), checked again on the opened descriptor (/proc/self/fd), so a symlink
//    swapped in after the check cannot redirect the read;
//  - bounds everything: bytes read (ReadSmallFile), line length (LineReader), entries and
//    depth of directory walks (WalkTree), bytes copied (CopyTree, apparent size, so a
//    sparse file counts for what it claims);
//  - never follows a symlink out of the root, detects loops (ELOOP, and directories
//    reached twice by device and inode), and never throws for what the file system can
//    produce: see base/status.h for the Status / Result convention.
//
// base/ depends on nothing of mt's own; every subsystem may use it.
#pragma once
#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mt::base {

inline constexpr uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;

// "1.5 GiB", "300 KiB", "12 bytes": sizes in messages.
std::string FormatBytes(uint64_t bytes);

// The directory reads are confined to. Canonical (symlinks resolved) once, at Make.
class FileRoot {
 public:
  // `dir` must be an existing directory; it is canonicalised.
  static Result<FileRoot> Make(const std::filesystem::path& dir);

  const std::filesystem::path& path() const { return root_; }
  // True when the canonical path `real` is the root or below it.
  bool Contains(const std::filesystem::path& real) const;
  // The real path of `p` (absolute, or relative to the process's working directory),
  // if it exists and is inside the root: kNotFound, kLoop, kEscapes, kPermission otherwise.
  Result<std::filesystem::path> Confine(const std::filesystem::path& p) const;
  // Root-relative text for messages ("7877-x/prometheus/meta.json"); `p` as given when it
  // is not below the root. Lexical only (no file system access).
  std::string Display(const std::filesystem::path& p) const;

 private:
  explicit FileRoot(std::filesystem::path root) : root_(std::move(root)) {}
  std::filesystem::path root_;
};

// An open regular file (move-only; closes its descriptor).
class OpenFile {
 public:
  OpenFile() = default;
  ~OpenFile();
  OpenFile(OpenFile&& o) noexcept;
  OpenFile& operator=(OpenFile&& o) noexcept;
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;

  int fd() const { return fd_; }
  uint64_t size() const { return static_cast<uint64_t>(st_.st_size); }   // at open time
  const struct stat& stat() const { return st_; }
  const std::filesystem::path& real_path() const { return real_; }

 private:
  friend Result<OpenFile> OpenRegularFile(const FileRoot*, const std::filesystem::path&, std::string_view);
  int fd_ = -1;
  struct stat st_ {};
  std::filesystem::path real_;
};

// Opens `p` for reading if it is a regular file whose real path is inside `root`
// (root == nullptr: anywhere — for files a user names on the command line — but still
// never a FIFO, device, socket or directory). `display` names the file in messages
// (default: root-relative, or `p`). Errors: kNotFound, kNotRegular ("… is a FIFO, not a
// regular file"), kEscapes, kLoop, kPermission, kIo.
Result<OpenFile> OpenRegularFile(const FileRoot* root, const std::filesystem::path& p, std::string_view display = {});
inline Result<OpenFile> OpenRegularFile(const FileRoot& root, const std::filesystem::path& p) {
  return OpenRegularFile(&root, p);
}

// The whole content of a small confined regular file: kTooLarge when it holds more than
// `max_bytes` (decided on the bytes actually read, so a file whose size lies is still
// bounded), plus the errors of OpenRegularFile.
Result<std::string> ReadSmallFile(const FileRoot& root, const std::filesystem::path& p, uint64_t max_bytes);

// Lines of an open file in memory O(max_line_bytes + block): a line longer than
// max_line_bytes is returned cut to that length with *truncated set, and its rest is
// skipped without being stored. Reading stops (Next returns false, hit_byte_limit()) after
// max_total_bytes (0: no limit). I/O errors end the lines and are kept in status().
struct LineLimits {
  size_t max_line_bytes = 64 * 1024;
  uint64_t max_total_bytes = 0;
  size_t block_bytes = 256 * 1024;
};
class LineReader {
 public:
  LineReader(int fd, LineLimits limits = {}, uint64_t start_offset = 0);
  // The next line without its '\n' (valid until the next call). A last line without '\n'
  // is returned too.
  bool Next(std::string_view* line, bool* truncated = nullptr);
  uint64_t lines() const { return lines_; }
  uint64_t bytes_read() const { return pos_ - start_; }
  bool hit_byte_limit() const { return hit_limit_; }
  uint64_t truncated_lines() const { return truncated_lines_; }
  const Status& status() const { return status_; }

 private:
  bool Fill();
  int fd_;
  LineLimits limits_;
  uint64_t start_, pos_;   // pos_: file offset of buf_[0] + end_ (next byte to read)
  std::string buf_;
  size_t begin_ = 0, end_ = 0;
  std::string line_;
  bool eof_ = false, hit_limit_ = false;
  uint64_t lines_ = 0, truncated_lines_ = 0;
  Status status_;
};

// ---- directory walks -------------------------------------------------------------------

enum class EntryType { kRegular, kDirectory, kSymlink, kOther, kNone };
const char* EntryTypeName(EntryType t);   // "regular file", "directory", "FIFO"… (kOther: see TypeName)
std::string TypeName(mode_t mode);        // "FIFO", "character device", "socket", …

struct WalkEntry {
  std::filesystem::path path;       // the start dir / relative (never resolved)
  std::filesystem::path relative;   // relative to the start dir
  std::string name;
  EntryType type = EntryType::kNone;   // of the entry itself (lstat); kSymlink for links
  mode_t mode = 0;                     // lstat mode (or the target's, when followed)
  uint64_t size = 0;                   // apparent size (st_size) of a regular file
  int depth = 0;                       // 0: a child of the start dir
  // Symlinks: `link` is ok when the target exists inside the root (then target_type says
  // what it is and `real` where); kEscapes / kLoop / kNotFound otherwise.
  Status link;
  EntryType target_type = EntryType::kNone;
  std::filesystem::path real;
};

enum class Visit { kContinue, kSkipDir, kStop };

struct WalkOptions {
  size_t max_entries = 100000;   // entries visited in all; kTooMany past it
  int max_depth = 16;            // deeper directories are not entered (not an error)
  // Follow symlinks whose target is inside the root: a followed link to a directory is
  // entered unless that directory (device, inode) was already entered — then the entry
  // is reported with link = kLoop and not entered. Links out of the root are never
  // followed (reported with link = kEscapes).
  bool follow_symlinks = false;
  bool sorted = true;            // entries of a directory in name order
};

struct WalkStats {
  size_t entries = 0;
  size_t loops = 0;        // links not followed because of a loop
  size_t escapes = 0;      // links not followed because they lead out of the root
  bool depth_limited = false;
};

// Walks `dir` (which must be confined to `root`; its own symlinks are resolved first)
// depth-first, calling `visit` for every entry. Unreadable subdirectories are skipped;
// kTooMany when more than max_entries entries exist (the walk stops there).
Result<WalkStats> WalkTree(const FileRoot& root, const std::filesystem::path& dir, const WalkOptions& options,
                           const std::function<Visit(const WalkEntry&)>& visit);

// One directory level, lstat types (links not followed, loops harmless), sorted by name.
// Works on any directory (no root): for listings of a workspace's top level. Past
// max_entries: kTooMany, or — when `truncated` is given — the first max_entries read
// (in directory order, then sorted) with *truncated set.
struct DirEntry {
  std::string name;
  EntryType type = EntryType::kNone;
  mode_t mode = 0;
  uint64_t size = 0;
};
Result<std::vector<DirEntry>> ListDirectory(const std::filesystem::path& dir, size_t max_entries = 1000000,
                                            bool* truncated = nullptr);

// What a path is without following a final symlink, never throwing: kNone when missing.
EntryType LinkType(const std::filesystem::path& p);
// What a path is after following symlinks; kNone when missing, dangling or a loop.
EntryType TargetType(const std::filesystem::path& p);

// ---- copying a tree --------------------------------------------------------------------

struct CopyOptions {
  uint64_t max_total_bytes = 8 * kGiB;    // sum of apparent sizes; kTooLarge past it
  uint64_t max_file_bytes = UINT64_MAX;   // any one file; kTooLarge past it
  size_t max_entries = 100000;
  // Links inside the root are copied as what they point to; links out of the root, loops,
  // FIFOs, devices and sockets make the copy fail (kEscapes / kLoop / kNotRegular): a tree
  // worth copying holds none.
};
struct CopyStats {
  size_t files = 0, directories = 0;
  uint64_t bytes = 0;   // apparent
};
// Sizes `from` (confined) as CopyTree would copy it, without copying: every error that
// CopyTree would give, before anything is written.
Result<CopyStats> MeasureTree(const FileRoot& root, const std::filesystem::path& from, const CopyOptions& options);
// Copies the tree `from` (confined to `root`) into the new directory `to` (its parent must
// exist; `to` must not). Measures first, so a refused copy writes nothing; holes of sparse
// files stay holes. On failure `to` is removed.
Result<CopyStats> CopyTree(const FileRoot& root, const std::filesystem::path& from, const std::filesystem::path& to,
                           const CopyOptions& options);

// ---- writing ---------------------------------------------------------------------------

// Writes `content` to dir/name through a temp file in `dir` and a rename. `dir` is
// created (one level) when missing; it and every existing component must be a real
// directory inside `root` — a symlinked `dir` is refused (kEscapes when it leads out,
// kNotDirectory otherwise), and the temp file is created O_EXCL|O_NOFOLLOW in a
// directory opened O_NOFOLLOW, so no planted link can redirect the write.
Status WriteFileAtomic(const FileRoot& root, const std::filesystem::path& dir, const std::string& name,
                       std::string_view content, mode_t mode = 0644);

// ---- content checks --------------------------------------------------------------------

// Is an open file text? Samples up to `chunks` pieces of `chunk_bytes`, spread evenly over
// the file (first and last included). NUL bytes are what a crashed NFS client leaves in a
// log (and what a sparse hole reads as): they are neither text nor binary, so a piece is
// judged on its other bytes — binary when more than 30% of them are C0 controls other
// than \t \n \v \f \r \b ESC, DEL, or not valid UTF-8 — and a piece of NUL bytes only
// votes neither way. The file is text unless more than half of the voting pieces are
// binary, or every piece was NUL-only.
struct TextSample {
  size_t pieces = 0;          // sampled
  size_t binary_pieces = 0;
  size_t nul_pieces = 0;      // NUL-only
  bool is_text = true;
  std::string reason;         // when not text: "12 of 16 sampled 64 KiB pieces are binary"
};
TextSample SampleText(int fd, uint64_t size, size_t chunks = 16, size_t chunk_bytes = 64 * 1024);
// The fraction of non-text bytes among the non-NUL bytes of `data` (the rule above, for
// one piece; 0 when it holds only NUL bytes).
double NonTextFraction(std::string_view data);

}  // namespace mt::base
