// Bounded child I/O (stdout cap and tail, captured stderr cap), the escaped-process
// sweep, and the size-bounded log (issue #14, finding 10).
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "exporter/log.h"
#include "exporter/subprocess.h"
#include "tests/unit/exporter/temp_dir.h"

extern char** environ;

namespace mt::exporter {
namespace {

using testing::TempDir;

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

TEST(ParentPidFromStat, HandlesSpacesAndParensInTheCommand) {
  EXPECT_EQ(ParentPidFromStat("123 (bash) S 45 123 123 0 -1"), 45);
  EXPECT_EQ(ParentPidFromStat("123 (a) b (c) R 7 1 1"), 7);
  EXPECT_EQ(ParentPidFromStat("123 (x) Z 1 0 0"), 1);
  EXPECT_EQ(ParentPidFromStat("garbage"), -1);
  EXPECT_EQ(ParentPidFromStat("1 (x)"), -1);
}

TEST(RunSubprocess, StdoutIsCappedCountedAndItsTailKept) {
  SubprocessOptions o;
  o.max_output = 1000;
  o.tail_bytes = 10;
  auto r = RunSubprocess({"bash", "-c", "head -c 100000 /dev/zero | tr '\\0' a; printf 'END-MARK\\n'"}, o);
  ASSERT_TRUE(r.started) << r.error;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, std::string(1000, 'a'));
  EXPECT_EQ(r.output_bytes, 100009u);
  EXPECT_TRUE(r.output_truncated());
  EXPECT_EQ(r.output_tail, "aEND-MARK\n");
}

TEST(RunSubprocess, CapturedStderrIsCappedAndCounted) {
  SubprocessOptions o;
  o.capture_stderr = true;
  o.max_stderr = 16;
  auto r = RunSubprocess({"bash", "-c", "echo out; head -c 5000 /dev/zero | tr '\\0' e >&2"}, o);
  ASSERT_TRUE(r.started);
  EXPECT_EQ(r.output, "out\n");
  EXPECT_EQ(r.stderr_text, std::string(16, 'e'));
  EXPECT_EQ(r.stderr_bytes, 5000u);
  EXPECT_TRUE(r.stderr_truncated());
}

bool Alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  size_t paren = line.rfind(')');
  return paren != std::string::npos && line[paren + 2] != 'Z';
}

TEST(KillEscapedProcesses, KillsSetsidLeftoversOnlyWhenAsked) {
  ASSERT_TRUE(BecomeChildSubreaper());
  TempDir d;
  const std::string cmd = "setsid bash -c 'echo $$ > " + d.str() + "/pid; exec sleep 300' </dev/null >/dev/null 2>&1 & "
                          "for i in $(seq 200); do [ -s " + d.str() + "/pid ] && break; sleep 0.01; done";
  SubprocessOptions o;
  auto r = RunSubprocess({"bash", "-c", cmd}, o);  // without kill_escaped: it survives
  ASSERT_EQ(r.exit_code, 0);
  pid_t pid = std::stoi(ReadFile(d.str() + "/pid"));
  EXPECT_TRUE(Alive(pid));
  EXPECT_EQ(::getpgid(pid), pid);  // it left the group
  EXPECT_EQ(KillEscapedProcesses(), 1u);  // re-parented here, so it is found
  EXPECT_FALSE(Alive(pid));
  EXPECT_EQ(KillEscapedProcesses(), 0u);

  std::filesystem::remove(d.str() + "/pid");
  o.kill_escaped = true;
  r = RunSubprocess({"bash", "-c", cmd}, o);
  pid = std::stoi(ReadFile(d.str() + "/pid"));
  EXPECT_EQ(r.escaped_killed, 1u);
  EXPECT_FALSE(Alive(pid));
}

TEST(KillEscapedProcesses, LeavesChildrenThatPredateTheSubreaperAlone) {
  // As if a wrapper had run `sleep 300 & exec mt-exporter`.
  pid_t pid = -1;
  const char* argv[] = {"sleep", "300", nullptr};
  ASSERT_EQ(::posix_spawnp(&pid, "sleep", nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  ASSERT_TRUE(BecomeChildSubreaper());
  EXPECT_EQ(KillEscapedProcesses(), 0u);
  EXPECT_TRUE(Alive(pid));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

TEST(Log, RotatesAtMaxBytesWithAMarker) {
  TempDir d;
  const std::string path = d.str() + "/x.log";
  ASSERT_TRUE(OpenLog(path, 4096));
  const int fd = LogFd();
  for (int i = 0; i < 200; ++i) Log("line " + std::to_string(i) + " " + std::string(60, 'x'));
  EXPECT_EQ(LogFd(), fd);  // children keep writing to the same descriptor
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_LE(st.st_size, 4096);
  ASSERT_EQ(::stat((path + ".1").c_str(), &st), 0);
  EXPECT_LE(st.st_size, 4096);
  std::string text = ReadFile(path);
  EXPECT_NE(text.find("log reached 4096 bytes (--log-max-bytes); the previous part is in " + path + ".1"),
            std::string::npos);
  EXPECT_NE(text.find("line 199 "), std::string::npos);
  ASSERT_TRUE(OpenLog(""));  // back to stderr for the other tests in this process
}

TEST(StderrLogLines, OneMessagePerLineAndAMarkerForTheRest) {
  auto l = StderrLogLines("p", "a\r\nb\n\nc", 100, "why");
  ASSERT_EQ(l.size(), 5u);
  EXPECT_EQ(l[0], "p: stderr: a");
  EXPECT_EQ(l[1], "p: stderr: b");
  EXPECT_EQ(l[2], "p: stderr: ");
  EXPECT_EQ(l[3], "p: stderr: c");
  EXPECT_EQ(l[4], "p: stderr: [93 more bytes dropped; why]");
  EXPECT_TRUE(StderrLogLines("p", "", 0, "why").empty());
}

}  // namespace
}  // namespace mt::exporter
