// base/workspace_files and base/temp_dirs against the inputs of hardening issue #14: FIFOs,
// devices and symlinks to them, symlinks out of the root, loops, huge lines, size caps,
// sparse files, planted links on the write path, binary content, and temp directories
// removed on every exit path. Each test bounds its own time (a FIFO must never block).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <random>
#include <string>

#include "base/temp_dirs.h"
#include "base/workspace_files.h"

namespace mt::base {
namespace {
namespace fs = std::filesystem;

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = (fs::temp_directory_path() / "mt-base-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(t.data()), nullptr);
    top_ = t;
    ws_ = top_ / "ws";
    outside_ = top_ / "outside";
    fs::create_directories(ws_);
    fs::create_directories(outside_);
    Write(outside_ / "secret.txt", "TOP-SECRET-BYTES\n");
    auto r = FileRoot::Make(ws_);
    ASSERT_TRUE(r.ok()) << r.message();
    root_.emplace(std::move(*r));
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(top_, ec);
  }
  static void Write(const fs::path& p, const std::string& s) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << s;
  }
  // Runs f on a thread and fails (instead of hanging the suite) after 5 s.
  template <typename F>
  auto Bounded(F f) {
    auto fut = std::async(std::launch::async, f);
    if (fut.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
      ADD_FAILURE() << "blocked for more than 5 s";
      std::_Exit(1);   // a blocked thread cannot be joined
    }
    return fut.get();
  }
  fs::path top_, ws_, outside_;
  std::optional<FileRoot> root_;
};

TEST_F(FilesTest, ReadsARegularFileInsideTheRoot) {
  Write(ws_ / "job" / "meta.json", "{\"a\":1}");
  auto r = ReadSmallFile(*root_, ws_ / "job" / "meta.json", 1024);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(*r, "{\"a\":1}");
  // A symlink that stays inside the root is fine.
  fs::create_symlink("job/meta.json", ws_ / "link.json");
  auto l = ReadSmallFile(*root_, ws_ / "link.json", 1024);
  ASSERT_TRUE(l.ok()) << l.message();
  EXPECT_EQ(*l, "{\"a\":1}");
}

TEST_F(FilesTest, FifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((ws_ / "meta.json").c_str(), 0644), 0);
  auto r = Bounded([&] { return ReadSmallFile(*root_, ws_ / "meta.json", 1024); });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.code(), Errc::kNotRegular);
  EXPECT_EQ(r.message(), "meta.json is a FIFO, not a regular file");
  auto o = Bounded([&] { return OpenRegularFile(nullptr, ws_ / "meta.json"); });
  EXPECT_EQ(o.code(), Errc::kNotRegular);
}

TEST_F(FilesTest, CharacterDeviceIsRefused) {
  // /dev/null and /dev/zero are character devices: refused even with no root at all.
  auto r = Bounded([&] { return OpenRegularFile(nullptr, "/dev/zero"); });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.code(), Errc::kNotRegular);
  EXPECT_NE(r.message().find("is a character device, not a regular file"), std::string::npos) << r.message();
  // A device node inside the workspace (needs CAP_MKNOD: skipped without it).
  if (::mknod((ws_ / "zero").c_str(), S_IFCHR | 0644, makedev(1, 5)) == 0) {
    auto d = Bounded([&] { return ReadSmallFile(*root_, ws_ / "zero", 1 << 20); });
    EXPECT_EQ(d.code(), Errc::kNotRegular);
    EXPECT_EQ(d.message(), "zero is a character device, not a regular file");
  }
}

TEST_F(FilesTest, SymlinkToDevZeroIsRefusedAsOutsideTheRoot) {
  fs::create_symlink("/dev/zero", ws_ / "meta.json");
  auto r = Bounded([&] { return ReadSmallFile(*root_, ws_ / "meta.json", 1 << 20); });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.code(), Errc::kEscapes);
  EXPECT_NE(r.message().find("meta.json leads outside"), std::string::npos) << r.message();
}

TEST_F(FilesTest, SymlinkOutOfTheRootIsRefusedAndNothingOfTheTargetLeaks) {
  fs::create_symlink(outside_ / "secret.txt", ws_ / "file");
  fs::create_symlink(outside_, ws_ / "dir");
  for (const fs::path& p : {ws_ / "file", ws_ / "dir" / "secret.txt"}) {
    auto r = ReadSmallFile(*root_, p, 1024);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.code(), Errc::kEscapes);
    EXPECT_EQ(r.message().find("TOP-SECRET"), std::string::npos);
  }
  // A walk does not follow them either.
  std::vector<std::string> seen;
  WalkOptions o;
  o.follow_symlinks = true;
  auto w = WalkTree(*root_, ws_, o, [&](const WalkEntry& e) {
    seen.push_back(e.relative.string());
    if (e.type == EntryType::kSymlink) {
      EXPECT_EQ(e.link.code(), Errc::kEscapes) << e.name;
    }
    return Visit::kContinue;
  });
  ASSERT_TRUE(w.ok()) << w.message();
  EXPECT_EQ(w->escapes, 2u);
  EXPECT_EQ(seen, (std::vector<std::string>{"dir", "file"}));
  // And a copy refuses them with a specific error, writing nothing.
  fs::create_directories(ws_ / "tree");
  fs::create_symlink(outside_, ws_ / "tree" / "out");
  auto c = CopyTree(*root_, ws_ / "tree", top_ / "copy", CopyOptions{});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.code(), Errc::kEscapes);
  EXPECT_NE(c.message().find("tree/out is a symbolic link that leads outside"), std::string::npos) << c.message();
  EXPECT_FALSE(fs::exists(top_ / "copy"));
}

TEST_F(FilesTest, SymlinkLoopsAreDetected) {
  fs::create_symlink("loop", ws_ / "loop");                 // ELOOP
  fs::create_directories(ws_ / "a" / "b");
  fs::create_symlink("../..", ws_ / "a" / "b" / "up");      // a directory reached twice
  auto r = ReadSmallFile(*root_, ws_ / "loop", 1024);
  EXPECT_EQ(r.code(), Errc::kLoop) << r.message();
  EXPECT_EQ(r.message(), "loop is a symbolic link loop (or goes through one)");
  WalkOptions o;
  o.follow_symlinks = true;
  size_t n = 0;
  auto w = Bounded([&] {
    return WalkTree(*root_, ws_, o, [&](const WalkEntry&) {
      ++n;
      return Visit::kContinue;
    });
  });
  ASSERT_TRUE(w.ok()) << w.message();
  EXPECT_EQ(w->loops, 2u);
  EXPECT_LT(n, 10u);
  // One level: lstat types only, a loop is just a symlink.
  auto l = ListDirectory(ws_);
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->size(), 2u);   // a, loop
  EXPECT_EQ((*l)[1].name, "loop");
  EXPECT_EQ((*l)[1].type, EntryType::kSymlink);
}

TEST_F(FilesTest, WalkIsBoundedInEntries) {
  for (int i = 0; i < 50; ++i) Write(ws_ / "many" / std::to_string(i), "x");
  WalkOptions o;
  o.max_entries = 20;
  auto w = WalkTree(*root_, ws_, o, [](const WalkEntry&) { return Visit::kContinue; });
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.code(), Errc::kTooMany);
  EXPECT_EQ(w.message(), "many holds more than 20 entries (walk stopped)");
}

TEST_F(FilesTest, HugeLineCostsOnlyTheCap) {
  // 8 MiB on one line, then two short lines.
  {
    std::ofstream o(ws_ / "log", std::ios::binary);
    o << "first\n" << std::string(8 << 20, 'x') << "\nlast\n";
  }
  auto f = OpenRegularFile(*root_, ws_ / "log");
  ASSERT_TRUE(f.ok());
  LineLimits lim;
  lim.max_line_bytes = 1000;
  LineReader r(f->fd(), lim);
  std::string_view line;
  bool cut = false;
  ASSERT_TRUE(r.Next(&line, &cut));
  EXPECT_EQ(line, "first");
  EXPECT_FALSE(cut);
  ASSERT_TRUE(r.Next(&line, &cut));
  EXPECT_EQ(line.size(), 1000u);
  EXPECT_TRUE(cut);
  ASSERT_TRUE(r.Next(&line, &cut));
  EXPECT_EQ(line, "last");
  EXPECT_FALSE(r.Next(&line, &cut));
  EXPECT_EQ(r.lines(), 3u);
  EXPECT_EQ(r.truncated_lines(), 1u);
  EXPECT_TRUE(r.status().ok());
}

TEST_F(FilesTest, LineReaderStopsAtTheByteLimit) {
  std::string s;
  for (int i = 0; i < 1000; ++i) s += "line " + std::to_string(i) + "\n";
  Write(ws_ / "log", s);
  auto f = OpenRegularFile(*root_, ws_ / "log");
  ASSERT_TRUE(f.ok());
  LineLimits lim;
  lim.max_total_bytes = 100;
  LineReader r(f->fd(), lim);
  std::string_view line;
  int n = 0;
  while (r.Next(&line)) ++n;
  EXPECT_TRUE(r.hit_byte_limit());
  EXPECT_EQ(r.bytes_read(), 100u);
  EXPECT_LE(n, 15);
}

TEST_F(FilesTest, SizeCapIsEnforcedOnTheBytesRead) {
  Write(ws_ / "big", std::string(5000, 'a'));
  auto r = ReadSmallFile(*root_, ws_ / "big", 4096);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.code(), Errc::kTooLarge);
  EXPECT_EQ(r.message(), "big is 4.9 KiB, more than the 4.0 KiB it may hold");
  auto ok = ReadSmallFile(*root_, ws_ / "big", 5000);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), 5000u);
}

TEST_F(FilesTest, CopyCountsSparseFilesByApparentSizeAndKeepsHoles) {
  fs::create_directories(ws_ / "block" / "chunks");
  Write(ws_ / "block" / "meta.json", "{}");
  {
    int fd = ::open((ws_ / "block" / "chunks" / "000001").c_str(), O_WRONLY | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, "head", 4, 0), 4);
    ASSERT_EQ(::ftruncate(fd, 64 << 20), 0);   // 64 MiB apparent, one page on disk
    ::close(fd);
  }
  CopyOptions small;
  small.max_total_bytes = 16 << 20;
  auto refused = CopyTree(*root_, ws_ / "block", top_ / "copy", small);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), Errc::kTooLarge);
  EXPECT_EQ(refused.message(),
            "block holds more than 16.0 MiB (apparent size, sparse files counted in full), the copy limit; not copied");
  EXPECT_FALSE(fs::exists(top_ / "copy"));
  CopyOptions per_file;
  per_file.max_file_bytes = 1 << 20;
  auto one = CopyTree(*root_, ws_ / "block", top_ / "copy", per_file);
  EXPECT_EQ(one.code(), Errc::kTooLarge);
  EXPECT_NE(one.message().find("block/chunks/000001 is 64.0 MiB (apparent size)"), std::string::npos) << one.message();

  auto c = CopyTree(*root_, ws_ / "block", top_ / "copy", CopyOptions{});
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->files, 2u);
  EXPECT_EQ(c->bytes, (64u << 20) + 2);
  struct stat st {};
  ASSERT_EQ(::stat((top_ / "copy" / "chunks" / "000001").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 64 << 20);
  EXPECT_LT(st.st_blocks * 512, 8 << 20) << "holes were filled";
  std::ifstream in(top_ / "copy" / "chunks" / "000001");
  std::string head(4, '\0');
  in.read(head.data(), 4);
  EXPECT_EQ(head, "head");
}

TEST_F(FilesTest, CopyRefusesFifosInTheTree) {
  fs::create_directories(ws_ / "block");
  ASSERT_EQ(::mkfifo((ws_ / "block" / "index").c_str(), 0644), 0);
  auto c = Bounded([&] { return CopyTree(*root_, ws_ / "block", top_ / "copy", CopyOptions{}); });
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.code(), Errc::kNotRegular);
  EXPECT_EQ(c.message(), "block/index is a FIFO, not a regular file; not copied");
}

TEST_F(FilesTest, WriteRefusesPlantedLinks) {
  fs::create_directories(ws_ / "job");
  ASSERT_TRUE(WriteFileAtomic(*root_, ws_ / "job" / "mt_report", "perf.html", "<html>").ok());
  std::ifstream in(ws_ / "job" / "mt_report" / "perf.html");
  std::string s;
  std::getline(in, s);
  EXPECT_EQ(s, "<html>");
  // The report directory links out of the workspace.
  fs::create_directories(ws_ / "job2");
  fs::create_symlink(outside_, ws_ / "job2" / "mt_report");
  Status st = WriteFileAtomic(*root_, ws_ / "job2" / "mt_report", "perf.html", "x");
  EXPECT_EQ(st.code(), Errc::kEscapes);
  EXPECT_FALSE(fs::exists(outside_ / "perf.html"));
  // The final name is a link to a file outside: replaced, the target untouched.
  fs::create_symlink(outside_ / "secret.txt", ws_ / "job" / "mt_report" / "perf.html.new");
  ASSERT_TRUE(WriteFileAtomic(*root_, ws_ / "job" / "mt_report", "perf.html.new", "y").ok());
  std::ifstream sec(outside_ / "secret.txt");
  std::getline(sec, s);
  EXPECT_EQ(s, "TOP-SECRET-BYTES");
  EXPECT_FALSE(fs::is_symlink(ws_ / "job" / "mt_report" / "perf.html.new"));
}

TEST_F(FilesTest, BinaryContentIsNotText) {
  std::mt19937 rng(7);
  std::string bin(1 << 20, '\0');
  for (auto& c : bin) c = static_cast<char>(rng());
  Write(ws_ / "random.log", bin);
  std::string text;
  while (text.size() < (1 << 20)) text += "I0210 00:00:01 completed step: 12, seconds: 5.6, Tokens/s/device: 3000 — ok ✓\n";
  Write(ws_ / "text.log", text);
  Write(ws_ / "zeros.log", std::string(300000, '\0'));
  // A text log with a NUL hole in the middle (an NFS client crashed) stays text.
  Write(ws_ / "holed.log", text + std::string(200000, '\0') + text);
  auto check = [&](const char* n) {
    auto f = OpenRegularFile(*root_, ws_ / n);
    EXPECT_TRUE(f.ok());
    return SampleText(f->fd(), f->size());
  };
  TextSample r = check("random.log");
  EXPECT_FALSE(r.is_text);
  EXPECT_EQ(r.reason, "16 of 16 sampled 64.0 KiB pieces are binary (more than 30% control or invalid UTF-8 bytes)");
  EXPECT_TRUE(check("text.log").is_text);
  EXPECT_TRUE(check("holed.log").is_text);
  TextSample z = check("zeros.log");
  EXPECT_FALSE(z.is_text);
  EXPECT_EQ(z.reason, "every sampled 64.0 KiB piece (5) holds only NUL bytes");
  EXPECT_LT(NonTextFraction("plain \x1b[31mred\x1b[0m text\r\n"), 0.01);
  EXPECT_GT(NonTextFraction(std::string("\x01\x02\x03\xff\xfe", 5)), 0.9);
}

TEST(TempDirs, RemovedOnRequestWithTheirChild) {
  std::string t = (fs::temp_directory_path() / "mt-base-tmp-XXXXXX").string();
  ASSERT_NE(::mkdtemp(t.data()), nullptr);
  fs::create_directories(fs::path(t) / "data" / "wal");
  std::ofstream(fs::path(t) / "data" / "wal" / "000001") << "x";
  fs::create_symlink("/etc/hostname", fs::path(t) / "data" / "link");   // removed, not followed
  pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  int before = RegisteredTempDirs();
  int slot = RegisterTempDir(t);
  ASSERT_GE(slot, 0);
  SetTempDirChild(slot, child);
  EXPECT_EQ(RegisteredTempDirs(), before + 1);
  RemoveRegisteredTempDirs();
  EXPECT_FALSE(fs::exists(t));
  EXPECT_TRUE(fs::exists("/etc/hostname"));
  EXPECT_NE(::kill(child, 0), 0) << "the child was not stopped";
  EXPECT_EQ(RegisteredTempDirs(), before);
  // A forgotten slot is left alone.
  t = (fs::temp_directory_path() / "mt-base-tmp-XXXXXX").string();
  ASSERT_NE(::mkdtemp(t.data()), nullptr);
  int s2 = RegisterTempDir(t);
  ForgetTempDir(s2);
  RemoveRegisteredTempDirs();
  EXPECT_TRUE(fs::exists(t));
  fs::remove_all(t);
}

TEST(TempDirs, RemovedWhenTheProcessDiesOfSigterm) {
  std::string t = (fs::temp_directory_path() / "mt-base-sig-XXXXXX").string();
  ASSERT_NE(::mkdtemp(t.data()), nullptr);
  std::ofstream(fs::path(t) / "f") << "x";
  pid_t pid = ::fork();
  if (pid == 0) {
    RegisterTempDir(t);
    InstallTempDirSignalCleanup();
    ::kill(::getpid(), SIGTERM);
    ::_exit(3);   // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  EXPECT_FALSE(fs::exists(t));
}

TEST(TempDirs, RemovedAtExit) {
  std::string t = (fs::temp_directory_path() / "mt-base-exit-XXXXXX").string();
  ASSERT_NE(::mkdtemp(t.data()), nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    RegisterTempDir(t);
    std::exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_FALSE(fs::exists(t));
}

}  // namespace
}  // namespace mt::base
