#include "base/workspace_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <utility>

#include "base/temp_dirs.h"

namespace mt::base {
namespace fs = std::filesystem;

namespace {

// "<name>: <errno text>" with the errno's code.
Status SysError(int err, const std::string& name, const char* what = nullptr) {
  std::string m = name + (what ? std::string(": ") + what : std::string()) + ": " + ErrnoText(err);
  if (err == ELOOP) m = name + " is a symbolic link loop (or goes through one)";
  if (err == ENOENT || err == ENOTDIR) m = name + " does not exist";
  return Status(ErrcOf(err), m);
}

EntryType TypeOf(mode_t m) {
  if (S_ISREG(m)) return EntryType::kRegular;
  if (S_ISDIR(m)) return EntryType::kDirectory;
  if (S_ISLNK(m)) return EntryType::kSymlink;
  return EntryType::kOther;
}

Result<fs::path> RealPath(const fs::path& p, const std::string& name) {
  if (p.empty()) return Result<fs::path>(Errc::kInvalid, "empty path");
  char* r = ::realpath(p.c_str(), nullptr);
  if (!r) return SysError(errno, name);
  fs::path out(r);
  std::free(r);
  return out;
}

struct Fd {
  int fd = -1;
  explicit Fd(int f = -1) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

bool ReadAllAt(int fd, char* data, size_t n, uint64_t off, size_t* got, int* err) {
  *got = 0;
  while (*got < n) {
    ssize_t r = ::pread(fd, data + *got, n - *got, static_cast<off_t>(off + *got));
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      *err = errno;
      return false;
    }
    if (r == 0) break;
    *got += static_cast<size_t>(r);
  }
  return true;
}

bool WriteAll(int fd, const char* data, size_t n, uint64_t off, int* err) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pwrite(fd, data + done, n - done, static_cast<off_t>(off + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      *err = errno;
      return false;
    }
    done += static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

std::string FormatBytes(uint64_t b) {
  char buf[64];
  if (b >= kGiB) std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(b) / static_cast<double>(kGiB));
  else if (b >= kMiB) std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / static_cast<double>(kMiB));
  else if (b >= kKiB) std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / static_cast<double>(kKiB));
  else std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(b));
  return buf;
}

std::string TypeName(mode_t m) {
  if (S_ISREG(m)) return "regular file";
  if (S_ISDIR(m)) return "directory";
  if (S_ISLNK(m)) return "symbolic link";
  if (S_ISFIFO(m)) return "FIFO";
  if (S_ISCHR(m)) return "character device";
  if (S_ISBLK(m)) return "block device";
  if (S_ISSOCK(m)) return "socket";
  return "special file";
}

const char* EntryTypeName(EntryType t) {
  switch (t) {
    case EntryType::kRegular: return "regular file";
    case EntryType::kDirectory: return "directory";
    case EntryType::kSymlink: return "symbolic link";
    case EntryType::kOther: return "special file";
    case EntryType::kNone: return "nothing";
  }
  return "nothing";
}

// ---- FileRoot --------------------------------------------------------------------------

Result<FileRoot> FileRoot::Make(const fs::path& dir) {
  auto real = RealPath(dir, dir.string());
  if (!real.ok()) return real.status();
  struct stat st {};
  if (::stat(real->c_str(), &st) != 0) return SysError(errno, dir.string());
  if (!S_ISDIR(st.st_mode)) return Status(Errc::kNotDirectory, dir.string() + " is a " + TypeName(st.st_mode) + ", not a directory");
  return FileRoot(*real);
}

bool FileRoot::Contains(const fs::path& real) const {
  const std::string& r = root_.native();
  const std::string& p = real.native();
  if (p.size() < r.size() || p.compare(0, r.size(), r) != 0) return false;
  if (p.size() == r.size()) return true;
  return r == "/" || p[r.size()] == '/';
}

std::string FileRoot::Display(const fs::path& p) const {
  if (p.is_relative()) return p.string();
  fs::path rel = p.lexically_normal().lexically_relative(root_);
  if (rel.empty() || *rel.begin() == "..") return p.string();
  return rel.string();
}

Result<fs::path> FileRoot::Confine(const fs::path& p) const {
  const std::string name = Display(p);
  auto real = RealPath(p, name);
  if (!real.ok()) return real.status();
  if (!Contains(*real))
    return Status(Errc::kEscapes, name + " leads outside " + root_.string() +
                                          " (through a symbolic link); only files inside it are read");
  return real;
}

// ---- OpenFile --------------------------------------------------------------------------

OpenFile::~OpenFile() {
  if (fd_ >= 0) ::close(fd_);
}
OpenFile::OpenFile(OpenFile&& o) noexcept : fd_(std::exchange(o.fd_, -1)), st_(o.st_), real_(std::move(o.real_)) {}
OpenFile& OpenFile::operator=(OpenFile&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    st_ = o.st_;
    real_ = std::move(o.real_);
  }
  return *this;
}

Result<OpenFile> OpenRegularFile(const FileRoot* root, const fs::path& p, std::string_view display) {
  const std::string name = !display.empty() ? std::string(display) : root ? root->Display(p) : p.string();
  // 1. Where it really is: never open anything outside the root (not even to look).
  Result<fs::path> real = root ? root->Confine(p) : RealPath(p, name);
  if (!real.ok()) {
    if (real.code() == Errc::kEscapes) return Status(Errc::kEscapes, name + " leads outside " + root->path().string() +
                                                                               " (through a symbolic link); only files inside it are read");
    return real.status();
  }
  // 2. What it is, before open: a device is never opened, a FIFO never waited on.
  struct stat before {};
  if (::stat(real->c_str(), &before) != 0) return SysError(errno, name);
  if (!S_ISREG(before.st_mode)) return Status(Errc::kNotRegular, name + " is a " + TypeName(before.st_mode) + ", not a regular file");
  // 3. Open without blocking and without following a link swapped in since.
  Fd fd(::open(real->c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW));
  if (fd.fd < 0) {
    int err = errno;
    if (err == ELOOP) return Status(Errc::kLoop, name + " was replaced by a symbolic link while it was opened");
    return SysError(err, name);
  }
  OpenFile out;
  if (::fstat(fd.fd, &out.st_) != 0) return SysError(errno, name, "fstat");
  if (!S_ISREG(out.st_.st_mode)) return Status(Errc::kNotRegular, name + " is a " + TypeName(out.st_.st_mode) + ", not a regular file");
  if (out.st_.st_dev != before.st_dev || out.st_.st_ino != before.st_ino)
    return Status(Errc::kIo, name + " was replaced while it was opened; try again");
  // 4. The descriptor's own path: a directory component swapped for a link between the
  // check and the open would show here.
  if (root) {
    char link[64], target[PATH_MAX + 1];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd.fd);
    ssize_t n = ::readlink(link, target, PATH_MAX);
    if (n > 0) {
      target[n] = 0;
      if (!root->Contains(fs::path(target)))
        return Status(Errc::kEscapes, name + " leads outside " + root->path().string() + " (it changed while it was opened)");
    }
  }
  out.real_ = std::move(*real);
  out.fd_ = fd.release();
  return out;
}

Result<std::string> ReadSmallFile(const FileRoot& root, const fs::path& p, uint64_t max_bytes) {
  auto f = OpenRegularFile(&root, p);
  if (!f.ok()) return f.status();
  const std::string name = root.Display(p);
  if (f->size() > max_bytes)
    return Status(Errc::kTooLarge, name + " is " + FormatBytes(f->size()) + ", more than the " + FormatBytes(max_bytes) +
                                           " it may hold");
  std::string out;
  const uint64_t cap = max_bytes + 1;   // one byte more tells "too large" from "exactly full"
  char buf[64 * 1024];
  for (;;) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof buf, cap - out.size()));
    if (want == 0) break;
    size_t got = 0;
    int err = 0;
    if (!ReadAllAt(f->fd(), buf, want, out.size(), &got, &err)) return SysError(err, name, "read");
    if (got == 0) break;
    out.append(buf, got);
  }
  const uint64_t have = out.size();
  if (have > max_bytes)
    return Status(Errc::kTooLarge, name + " holds more than the " + FormatBytes(max_bytes) + " it may hold");
  return out;
}

// ---- LineReader ------------------------------------------------------------------------

LineReader::LineReader(int fd, LineLimits limits, uint64_t start_offset)
    : fd_(fd), limits_(limits), start_(start_offset), pos_(start_offset) {
  if (limits_.block_bytes < 4096) limits_.block_bytes = 4096;
  if (limits_.max_line_bytes == 0) limits_.max_line_bytes = 1;
  buf_.resize(limits_.block_bytes);
}

bool LineReader::Fill() {
  begin_ = end_ = 0;
  if (eof_ || hit_limit_ || !status_.ok()) return false;
  size_t want = buf_.size();
  if (limits_.max_total_bytes) {
    uint64_t left = limits_.max_total_bytes - std::min(limits_.max_total_bytes, pos_ - start_);
    if (left == 0) {
      hit_limit_ = true;
      return false;
    }
    want = static_cast<size_t>(std::min<uint64_t>(want, left));
  }
  for (;;) {
    ssize_t r = ::pread(fd_, buf_.data(), want, static_cast<off_t>(pos_));
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      status_ = Status(ErrcOf(errno), std::string("read: ") + ErrnoText(errno));
      return false;
    }
    if (r == 0) {
      eof_ = true;
      return false;
    }
    end_ = static_cast<size_t>(r);
    pos_ += static_cast<uint64_t>(r);
    return true;
  }
}

bool LineReader::Next(std::string_view* line, bool* truncated) {
  line_.clear();
  bool cut = false, any = false;
  for (;;) {
    if (begin_ == end_ && !Fill()) {
      if (!any) return false;
      // A last line without '\n' (or one the byte limit cut).
      if (hit_limit_) cut = true;
      break;
    }
    any = true;
    const char* b = buf_.data() + begin_;
    const void* nl = std::memchr(b, '\n', end_ - begin_);
    size_t n = nl ? static_cast<size_t>(static_cast<const char*>(nl) - b) : end_ - begin_;
    size_t room = limits_.max_line_bytes - line_.size();
    if (n > room) cut = true;
    line_.append(b, std::min(n, room));
    if (nl) {
      begin_ += n + 1;
      break;
    }
    begin_ = end_;
  }
  ++lines_;
  if (cut) ++truncated_lines_;
  if (truncated) *truncated = cut;
  *line = line_;
  return true;
}

// ---- walks -----------------------------------------------------------------------------

EntryType LinkType(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return EntryType::kNone;
  return TypeOf(st.st_mode);
}

EntryType TargetType(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return EntryType::kNone;
  return TypeOf(st.st_mode);
}

Result<std::vector<DirEntry>> ListDirectory(const fs::path& dir, size_t max_entries, bool* truncated) {
  if (truncated) *truncated = false;
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK));
  if (fd.fd < 0) return SysError(errno, dir.string());
  DIR* d = ::fdopendir(fd.fd);
  if (!d) return SysError(errno, dir.string());
  int dfd = fd.release();
  std::vector<DirEntry> out;
  Status st;
  errno = 0;
  while (dirent* e = ::readdir(d)) {
    const char* n = e->d_name;
    if (n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0))) continue;
    if (out.size() >= max_entries) {
      if (truncated) {
        *truncated = true;
        break;
      }
      st = Status(Errc::kTooMany, dir.string() + " holds more than " + std::to_string(max_entries) + " entries");
      break;
    }
    DirEntry de;
    de.name = n;
    struct stat s {};
    if (::fstatat(dfd, n, &s, AT_SYMLINK_NOFOLLOW) == 0) {
      de.type = TypeOf(s.st_mode);
      de.mode = s.st_mode;
      de.size = S_ISREG(s.st_mode) ? static_cast<uint64_t>(s.st_size) : 0;
    }
    out.push_back(std::move(de));
  }
  ::closedir(d);
  if (!st.ok()) return st;
  std::sort(out.begin(), out.end(), [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return out;
}

namespace {

struct Walker {
  const FileRoot& root;
  const WalkOptions& opt;
  const std::function<Visit(const WalkEntry&)>& visit;
  WalkStats stats;
  std::set<std::pair<dev_t, ino_t>> entered;
  Status error;
  bool stop = false;

  // `real`: the directory's real path (opened); `path`: as reported.
  void Dir(const fs::path& real, const fs::path& path, const fs::path& rel, int depth) {
    Fd fd(::open(real.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    if (fd.fd < 0) return;   // unreadable (or vanished): skipped
    DIR* d = ::fdopendir(fd.fd);
    if (!d) return;
    fd.release();
    std::vector<std::string> names;
    while (dirent* e = ::readdir(d)) {
      const char* n = e->d_name;
      if (n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0))) continue;
      if (stats.entries + names.size() >= opt.max_entries) {
        ::closedir(d);
        error = Status(Errc::kTooMany, root.Display(path) + " holds more than " + std::to_string(opt.max_entries) +
                                               " entries (walk stopped)");
        stop = true;
        return;
      }
      names.emplace_back(n);
    }
    ::closedir(d);
    if (opt.sorted) std::sort(names.begin(), names.end());
    for (const auto& n : names) {
      if (stop) return;
      WalkEntry e;
      e.name = n;
      e.path = path / n;
      e.relative = rel.empty() ? fs::path(n) : rel / n;
      e.depth = depth;
      const fs::path child_real = real / n;
      struct stat st {};
      if (::lstat(child_real.c_str(), &st) != 0) continue;   // vanished
      e.type = TypeOf(st.st_mode);
      e.mode = st.st_mode;
      e.size = S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
      fs::path descend_real;
      struct stat dst = st;
      if (e.type == EntryType::kDirectory) {
        descend_real = child_real;
      } else if (e.type == EntryType::kSymlink) {
        auto target = root.Confine(child_real);
        const std::string name = root.Display(e.path);
        if (!target.ok()) {
          if (target.code() == Errc::kEscapes) {
            e.link = Status(Errc::kEscapes, name + " is a symbolic link that leads outside " + root.path().string());
            ++stats.escapes;
          } else if (target.code() == Errc::kLoop) {
            e.link = Status(Errc::kLoop, name + " is a symbolic link loop");
            ++stats.loops;
          } else {
            e.link = Status(target.code(), name + " is a symbolic link to nothing (" + target.message() + ")");
          }
        } else if (::stat(target->c_str(), &dst) == 0) {
          e.real = *target;
          e.target_type = TypeOf(dst.st_mode);
          if (opt.follow_symlinks) {
            e.mode = dst.st_mode;
            e.size = S_ISREG(dst.st_mode) ? static_cast<uint64_t>(dst.st_size) : 0;
            if (S_ISDIR(dst.st_mode)) descend_real = *target;
          }
        } else {
          e.link = Status(Errc::kNotFound, name + " is a symbolic link to nothing");
        }
      }
      if (!descend_real.empty() && entered.count({dst.st_dev, dst.st_ino})) {
        if (e.type == EntryType::kSymlink) {
          e.link = Status(Errc::kLoop, root.Display(e.path) + " is a symbolic link to a directory already walked (a loop)");
          ++stats.loops;
        }
        descend_real.clear();
      }
      if (++stats.entries > opt.max_entries) {
        error = Status(Errc::kTooMany, root.Display(path) + " holds more than " + std::to_string(opt.max_entries) +
                                               " entries (walk stopped)");
        stop = true;
        return;
      }
      Visit v = visit(e);
      if (v == Visit::kStop) {
        stop = true;
        return;
      }
      if (v == Visit::kSkipDir || descend_real.empty()) continue;
      if (depth + 1 > opt.max_depth) {
        stats.depth_limited = true;
        continue;
      }
      entered.insert({dst.st_dev, dst.st_ino});
      Dir(descend_real, e.path, e.relative, depth + 1);
    }
  }
};

}  // namespace

Result<WalkStats> WalkTree(const FileRoot& root, const fs::path& dir, const WalkOptions& options,
                           const std::function<Visit(const WalkEntry&)>& visit) {
  auto real = root.Confine(dir);
  if (!real.ok()) return real.status();
  struct stat st {};
  if (::stat(real->c_str(), &st) != 0) return SysError(errno, root.Display(dir));
  if (!S_ISDIR(st.st_mode))
    return Status(Errc::kNotDirectory, root.Display(dir) + " is a " + TypeName(st.st_mode) + ", not a directory");
  Walker w{root, options, visit, {}, {}, {}, false};
  w.entered.insert({st.st_dev, st.st_ino});
  w.Dir(*real, dir, fs::path(), 0);
  if (!w.error.ok()) return w.error;
  return w.stats;
}

// ---- copying ---------------------------------------------------------------------------

namespace {

WalkOptions CopyWalk(const CopyOptions& o) {
  WalkOptions w;
  w.max_entries = o.max_entries;
  w.max_depth = 16;
  w.follow_symlinks = true;
  return w;
}

// Copies `size` bytes of src into the new file dst, keeping holes.
Status CopyFileSparse(const fs::path& src, const fs::path& dst, uint64_t size, const std::string& name) {
  Fd in(::open(src.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW));
  if (in.fd < 0) return SysError(errno, name);
  struct stat st {};
  if (::fstat(in.fd, &st) != 0) return SysError(errno, name);
  if (!S_ISREG(st.st_mode)) return Status(Errc::kNotRegular, name + " is a " + TypeName(st.st_mode) + ", not a regular file");
  Fd out(::open(dst.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (out.fd < 0) return SysError(errno, dst.string());
  std::unique_ptr<char[]> buf(new char[1 << 20]);
  uint64_t off = 0;
  bool sparse_ok = true;
  while (off < size) {
    uint64_t data = off, end = size;
    if (sparse_ok) {
      off_t d = ::lseek(in.fd, static_cast<off_t>(off), SEEK_DATA);
      if (d < 0) {
        if (errno == ENXIO) break;   // only a hole left
        sparse_ok = false;           // not supported: copy everything
      } else {
        data = static_cast<uint64_t>(d);
        if (data >= size) break;
        off_t h = ::lseek(in.fd, d, SEEK_HOLE);
        end = h < 0 ? size : std::min<uint64_t>(size, static_cast<uint64_t>(h));
      }
    }
    for (uint64_t p = data; p < end;) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(1 << 20, end - p));
      size_t got = 0;
      int err = 0;
      if (!ReadAllAt(in.fd, buf.get(), want, p, &got, &err)) return SysError(err, name, "read");
      if (got == 0) {   // shrank while copied
        end = p;
        size = p;
        break;
      }
      if (!WriteAll(out.fd, buf.get(), got, p, &err)) return SysError(err, dst.string(), "write");
      p += got;
    }
    off = end;
  }
  if (::ftruncate(out.fd, static_cast<off_t>(size)) != 0) return SysError(errno, dst.string(), "truncate");
  return Status::Ok();
}

}  // namespace

Result<CopyStats> MeasureTree(const FileRoot& root, const fs::path& from, const CopyOptions& options) {
  CopyStats stats;
  Status err;
  const std::string top = root.Display(from);
  auto w = WalkTree(root, from, CopyWalk(options), [&](const WalkEntry& e) {
    const std::string name = root.Display(e.path);
    if (e.type == EntryType::kSymlink && !e.link.ok()) {
      err = e.link;
      return Visit::kStop;
    }
    if (S_ISDIR(e.mode)) {
      ++stats.directories;
      return Visit::kContinue;
    }
    if (!S_ISREG(e.mode)) {
      err = Status(Errc::kNotRegular, name + " is a " + TypeName(e.mode) + ", not a regular file; not copied");
      return Visit::kStop;
    }
    if (e.size > options.max_file_bytes) {
      err = Status(Errc::kTooLarge, name + " is " + FormatBytes(e.size) + " (apparent size), more than the " +
                                            FormatBytes(options.max_file_bytes) + " allowed for one file; not copied");
      return Visit::kStop;
    }
    ++stats.files;
    stats.bytes += e.size;
    if (stats.bytes > options.max_total_bytes) {
      err = Status(Errc::kTooLarge, top + " holds more than " + FormatBytes(options.max_total_bytes) +
                                            " (apparent size, sparse files counted in full), the copy limit; not copied");
      return Visit::kStop;
    }
    return Visit::kContinue;
  });
  if (!w.ok()) return w.status();
  if (!err.ok()) return err;
  if (w->depth_limited) return Status(Errc::kTooMany, top + " is nested more than 16 directories deep; not copied");
  return stats;
}

Result<CopyStats> CopyTree(const FileRoot& root, const fs::path& from, const fs::path& to, const CopyOptions& options) {
  auto measured = MeasureTree(root, from, options);
  if (!measured.ok()) return measured.status();
  if (::mkdir(to.c_str(), 0700) != 0) return SysError(errno, to.string(), "mkdir");
  CopyStats stats;
  Status err;
  auto w = WalkTree(root, from, CopyWalk(options), [&](const WalkEntry& e) {
    const std::string name = root.Display(e.path);
    const fs::path dst = to / e.relative;
    if (e.type == EntryType::kSymlink && !e.link.ok()) {
      err = e.link;
      return Visit::kStop;
    }
    if (S_ISDIR(e.mode)) {
      if (::mkdir(dst.c_str(), 0700) != 0) {
        err = SysError(errno, dst.string(), "mkdir");
        return Visit::kStop;
      }
      ++stats.directories;
      return Visit::kContinue;
    }
    if (!S_ISREG(e.mode)) {
      err = Status(Errc::kNotRegular, name + " is a " + TypeName(e.mode) + ", not a regular file; not copied");
      return Visit::kStop;
    }
    stats.bytes += e.size;
    if (e.size > options.max_file_bytes || stats.bytes > options.max_total_bytes) {
      err = Status(Errc::kTooLarge, root.Display(from) + " grew past the copy limit (" +
                                            FormatBytes(options.max_total_bytes) + ") while it was copied; not copied");
      return Visit::kStop;
    }
    // The source's real path: a followed link's target, else the confined walk's path.
    fs::path real = e.type == EntryType::kSymlink ? e.real : fs::path();
    if (real.empty()) {
      auto c = root.Confine(e.path);
      if (!c.ok()) {
        err = c.status();
        return Visit::kStop;
      }
      real = *c;
    }
    if (Status s = CopyFileSparse(real, dst, e.size, name); !s.ok()) {
      err = s;
      return Visit::kStop;
    }
    ++stats.files;
    return Visit::kContinue;
  });
  if (w.ok() && err.ok()) return stats;
  RemoveTreeNoFollow(to.c_str());
  return w.ok() ? err : w.status();
}

// ---- writing ---------------------------------------------------------------------------

Status WriteFileAtomic(const FileRoot& root, const fs::path& dir, const std::string& name, std::string_view content,
                       mode_t mode) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos || name.find('\0') != std::string::npos)
    return Status(Errc::kInvalid, "bad file name '" + name + "'");
  const std::string shown = root.Display(dir);
  fs::path parent = dir.parent_path();
  const std::string leaf = dir.filename().string();
  if (leaf.empty() || leaf == "." || leaf == "..") return Status(Errc::kInvalid, "bad directory " + dir.string());
  auto preal = root.Confine(parent);
  if (!preal.ok()) return preal.status();
  Fd pfd(::open(preal->c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (pfd.fd < 0) return SysError(errno, root.Display(parent));
  if (::mkdirat(pfd.fd, leaf.c_str(), 0755) != 0 && errno != EEXIST) return SysError(errno, shown, "mkdir");
  Fd dfd(::openat(pfd.fd, leaf.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dfd.fd < 0) {
    int e = errno;
    struct stat st {};
    if (::fstatat(pfd.fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
      auto c = root.Confine(dir);
      if (!c.ok() && c.code() == Errc::kEscapes)
        return Status(Errc::kEscapes, shown + " is a symlink that leads outside " + root.path().string() +
                                              "; refusing to write through it");
      return Status(Errc::kNotDirectory, shown + " is a symlink; refusing to write through it");
    }
    if (e == ENOTDIR) return Status(Errc::kNotDirectory, shown + " is not a directory");
    return SysError(e, shown);
  }
  static std::atomic<unsigned> counter{0};
  std::string tmp;
  Fd out;
  for (int attempt = 0; attempt < 16 && out.fd < 0; ++attempt) {
    tmp = "." + name + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
    out.fd = ::openat(dfd.fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (out.fd < 0 && errno != EEXIST) return SysError(errno, shown + "/" + tmp, "create");
  }
  if (out.fd < 0) return Status(Errc::kIo, "cannot create a temp file in " + shown);
  int err = 0;
  if (!WriteAll(out.fd, content.data(), content.size(), 0, &err) || ::close(out.release()) != 0) {
    if (!err) err = errno;
    ::unlinkat(dfd.fd, tmp.c_str(), 0);
    return SysError(err, shown + "/" + tmp, "write");
  }
  if (::renameat(dfd.fd, tmp.c_str(), dfd.fd, name.c_str()) != 0) {
    err = errno;
    ::unlinkat(dfd.fd, tmp.c_str(), 0);
    return SysError(err, shown + "/" + name, "rename");
  }
  return Status::Ok();
}

// ---- text ------------------------------------------------------------------------------

double NonTextFraction(std::string_view d) {
  size_t bad = 0, nul = 0;
  const auto* s = reinterpret_cast<const unsigned char*>(d.data());
  const size_t n = d.size();
  for (size_t i = 0; i < n;) {
    unsigned char c = s[i];
    if (c == 0) {   // holes: neither text nor binary
      ++nul;
      ++i;
      continue;
    }
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f' && c != '\b' && c != 0x1b) || c == 0x7f) ++bad;
      ++i;
      continue;
    }
    size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (len == 0 || c == 0xC0 || c == 0xC1 || c > 0xF4) {
      ++bad;
      ++i;
      continue;
    }
    if (i + len > n) {   // cut at the end of the piece: not held against it
      break;
    }
    bool ok = true;
    for (size_t k = 1; k < len; ++k)
      if ((s[i + k] & 0xC0) != 0x80) ok = false;
    if (!ok) {
      ++bad;
      ++i;
      continue;
    }
    i += len;
  }
  if (n == nul) return 0;
  return static_cast<double>(bad) / static_cast<double>(n - nul);
}

TextSample SampleText(int fd, uint64_t size, size_t chunks, size_t chunk_bytes) {
  TextSample t;
  if (size == 0 || chunks == 0 || chunk_bytes == 0) return t;
  std::string buf(chunk_bytes, '\0');
  std::vector<uint64_t> offsets;
  if (size <= chunks * chunk_bytes) {
    for (uint64_t o = 0; o < size; o += chunk_bytes) offsets.push_back(o);
  } else if (chunks == 1) {
    offsets.push_back(0);
  } else {
    for (size_t i = 0; i < chunks; ++i) offsets.push_back((size - chunk_bytes) / (chunks - 1) * i);
  }
  for (uint64_t o : offsets) {
    size_t got = 0;
    int err = 0;
    if (!ReadAllAt(fd, buf.data(), chunk_bytes, o, &got, &err) || got == 0) break;
    std::string_view piece(buf.data(), got);
    ++t.pieces;
    if (piece.find_first_not_of('\0') == std::string_view::npos) {
      ++t.nul_pieces;
      continue;
    }
    // A piece that starts inside a line may start inside a UTF-8 sequence: skip up to 3
    // continuation bytes.
    size_t skip = 0;
    while (o > 0 && skip < 3 && skip < piece.size() && (static_cast<unsigned char>(piece[skip]) & 0xC0) == 0x80) ++skip;
    if (NonTextFraction(piece.substr(skip)) > 0.30) ++t.binary_pieces;
  }
  const size_t voting = t.pieces - t.nul_pieces;
  const std::string unit = FormatBytes(chunk_bytes);
  if (t.pieces > 0 && voting == 0) {
    t.is_text = false;
    t.reason = "every sampled " + unit + " piece (" + std::to_string(t.pieces) + ") holds only NUL bytes";
  } else if (t.binary_pieces * 2 > voting) {
    t.is_text = false;
    t.reason = std::to_string(t.binary_pieces) + " of " + std::to_string(voting) + " sampled " + unit +
               " pieces are binary (more than 30% control or invalid UTF-8 bytes)";
  }
  return t;
}

}  // namespace mt::base
