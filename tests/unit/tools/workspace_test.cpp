#include "tools/logs/workspace.h"

#include <gtest/gtest.h>

#include "test_util.h"
#include "tools/common/nodelist.h"

namespace mt::tools {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::WriteFile;

class WorkspaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path ws = dir_.path() / "outputs";
    // A Slurm job: log + dir with `log` link + TSDB.
    WriteFile(ws / "7877-JAX-llama2-70b.log", "JOB_ID=7877\n");
    fs::create_directories(ws / "7877-JAX-llama2-70b/prometheus/01HQ2Z3Y4X5W6V7U8T9S0R1Q2P");
    fs::create_symlink("../7877-JAX-llama2-70b.log", ws / "7877-JAX-llama2-70b/log");
    // A TGS-tagged log whose dir was not renamed (job still running when tagged).
    WriteFile(ws / "8308-JAX-ds-proxy-FP8-24N-pdbs4-TGS_2520.123.log", "JOB_ID=8308\n");
    fs::create_directories(ws / "8308-JAX-ds-proxy");
    fs::create_symlink("../8308-JAX-ds-proxy-FP8-24N-pdbs4-TGS_2520.123.log", ws / "8308-JAX-ds-proxy/log");
    // Legacy .out log with no directory.
    WriteFile(ws / "6001-JAX-old.out", "JOB_ID=6001\n");
    // A local and a k8s job (k8s with rank logs).
    WriteFile(ws / "local_20260224_190000_a3f1-JAX-default.log", "x\n");
    WriteFile(ws / "k8s-20260224-190000-b2c4-JAX-qwen3-14b.log", "x\n");
    fs::create_directories(ws / "k8s-20260224-190000-b2c4-JAX-qwen3-14b");
    fs::create_symlink("../k8s-20260224-190000-b2c4-JAX-qwen3-14b.log", ws / "k8s-20260224-190000-b2c4-JAX-qwen3-14b/log");
    WriteFile(ws / "k8s-20260224-190000-b2c4-JAX-qwen3-14b/rank-1.log", "x\n");
    WriteFile(ws / "k8s-20260224-190000-b2c4-JAX-qwen3-14b/rank-10.log", "x\n");
    WriteFile(ws / "k8s-20260224-190000-b2c4-JAX-qwen3-14b/rank-2.log", "x\n");
    // A Ray job with worker logs in both layouts.
    WriteFile(ws / "9100-JAX-ray.log", "x\n");
    fs::create_directories(ws / "9100-JAX-ray");
    fs::create_symlink("../9100-JAX-ray.log", ws / "9100-JAX-ray/log");
    WriteFile(ws / "9100-JAX-ray/ray_logs/chi1/worker-aa-1-2.out", "x\n");
    WriteFile(ws / "9100-JAX-ray/ray_logs/chi2/session_2026/logs/worker-bb-3-4.err", "x\n");
    // A queued job: the link dangles.
    fs::create_directories(ws / "9200-JAX-queued");
    fs::create_symlink("../9200-JAX-queued.log", ws / "9200-JAX-queued/log");
    // A checkpoint directory (no `log`) is not a job.
    fs::create_directories(ws / "llama2-70b/checkpoints");
    // Hostile entries: a job whose log link leads outside, and a symlink loop.
    WriteFile(dir_.path() / "secret.log", "JOB_ID=6666\n");
    fs::create_directories(ws / "6666-JAX-evil");
    fs::create_symlink("../../secret.log", ws / "6666-JAX-evil/log");
    fs::create_symlink("6667-JAX-loop.log", ws / "6667-JAX-loop.log.tmp");
    fs::create_symlink("6667-JAX-loop.log.tmp", ws / "6667-JAX-loop.log");
    fs::create_symlink(dir_.path() / "secret.log", ws / "6668-JAX-escape.log");
    ws_root_ = ws;
  }

  TempDir dir_;
  fs::path ws_root_;
};

TEST_F(WorkspaceTest, ParsesJobIdsOfEveryKind) {
  EXPECT_EQ(ParseJobId("7877-JAX-llama2-70b")->id, "7877");
  EXPECT_EQ(ParseJobId("7877-JAX-llama2-70b")->kind, "slurm");
  EXPECT_EQ(ParseJobId("local_20260224_190000_a3f1-JAX-x")->id, "local_20260224_190000_a3f1");
  EXPECT_EQ(ParseJobId("local_20260224_190000_1234-JAX-x")->id, "local_20260224_190000_1234");
  EXPECT_EQ(ParseJobId("k8s-20260224-190000-b2c4-JAX-x")->kind, "k8s");
  EXPECT_FALSE(ParseJobId("llama2-70b"));
  EXPECT_FALSE(ParseJobId("7877"));
}

TEST_F(WorkspaceTest, StripsTgsTags) {
  EXPECT_EQ(StripTgsTag("8308-JAX-ds-proxy-FP8-24N-pdbs4-TGS_2520.123"), "8308-JAX-ds-proxy");
  EXPECT_EQ(StripTgsTag("8308-JAX-ds-proxy-24N-TGS_2520.123"), "8308-JAX-ds-proxy");
  EXPECT_EQ(StripTgsTag("8308-JAX-ds-proxy"), "8308-JAX-ds-proxy");
}

TEST_F(WorkspaceTest, ListsJobsNotCheckpointDirsAndSkipsEscapes) {
  Workspace ws(ws_root_);
  std::vector<std::string> warnings;
  auto jobs = ws.List(&warnings);
  std::vector<std::string> ids;
  for (const auto& j : jobs) ids.push_back(j.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"6001", "6666", "7877", "8308", "9100", "9200",
                                           "k8s-20260224-190000-b2c4", "local_20260224_190000_a3f1"}));
  EXPECT_EQ(warnings.size(), 3u);   // both ends of the loop and the escaping log
  for (const auto& j : jobs) {
    if (j.id == "6666") {
      EXPECT_TRUE(j.log.empty()) << "a log link that leads outside is not followed";
    }
    if (j.id == "9200") {
      EXPECT_TRUE(j.log.empty());
    }
    if (j.id == "7877") {
      EXPECT_TRUE(j.has_tsdb);
    }
    if (j.id == "8308") {
      EXPECT_EQ(j.name, "JAX-ds-proxy");
      EXPECT_EQ(j.dir_display, "8308-JAX-ds-proxy");
      EXPECT_EQ(j.log_display, "8308-JAX-ds-proxy-FP8-24N-pdbs4-TGS_2520.123.log");
    }
    if (j.id == "6001") {
      EXPECT_EQ(j.log_display, "6001-JAX-old.out");
    }
    if (j.kind == "k8s") {
      ASSERT_EQ(j.rank_logs.size(), 3u);
      EXPECT_EQ(j.rank_logs[2].filename(), "rank-10.log");
    }
    if (j.id == "9100") {
      EXPECT_EQ(j.ray_worker_logs.size(), 2u);
    }
  }
}

TEST_F(WorkspaceTest, ResolvesByIdDirLogAndPrefix) {
  Workspace ws(ws_root_);
  EXPECT_EQ(ws.Resolve("7877").log_display, "7877-JAX-llama2-70b.log");
  EXPECT_EQ(ws.Resolve("7877-JAX-llama2-70b").id, "7877");
  EXPECT_EQ(ws.Resolve("7877-JAX-llama2-70b/").id, "7877");
  EXPECT_EQ(ws.Resolve("8308-JAX-ds-proxy-FP8-24N-pdbs4-TGS_2520.123.log").dir_display, "8308-JAX-ds-proxy");
  EXPECT_EQ(ws.Resolve("7877-JAX-llama2-70b/log").id, "7877");
  EXPECT_EQ(ws.Resolve("local_20260224_190000_a3f1").kind, "local");
  EXPECT_EQ(ws.Resolve("k8s-20260224-190000-b2c4").kind, "k8s");
  EXPECT_EQ(ws.Resolve("8308-JAX").id, "8308");
}

TEST_F(WorkspaceTest, RefusesEverythingThatLeavesTheWorkspace) {
  Workspace ws(ws_root_);
  auto code = [&](const std::string& spec) {
    try {
      ws.Resolve(spec);
    } catch (const WorkspaceError& e) {
      return e.code();
    }
    return WorkspaceError::Code::kNoWorkspace;   // "no error" sentinel
  };
  using C = WorkspaceError::Code;
  EXPECT_EQ(code("../secret.log"), C::kEscapes);
  EXPECT_EQ(code("7877-JAX-llama2-70b/../../secret.log"), C::kEscapes);
  EXPECT_EQ(code((dir_.path() / "secret.log").string()), C::kEscapes);
  EXPECT_EQ(code("6666-JAX-evil/log"), C::kEscapes);
  EXPECT_EQ(code("6668-JAX-escape.log"), C::kEscapes);
  EXPECT_EQ(code("6667-JAX-loop.log"), C::kInvalid);
  EXPECT_EQ(code("9999"), C::kNotFound);
  EXPECT_EQ(code("llama2-70b"), C::kNotFound);   // a checkpoint dir
  EXPECT_EQ(code(""), C::kInvalid);
  EXPECT_EQ(code(std::string("78\0 77", 6)), C::kInvalid);
  EXPECT_EQ(code("6"), C::kNotFound);
  EXPECT_EQ(code("66"), C::kNotFound);    // a number is an id, never a prefix
  try {
    ws.Resolve("../secret.log");
  } catch (const WorkspaceError& e) {
    EXPECT_NE(std::string(e.what()).find(".."), std::string::npos);
  }
}

TEST_F(WorkspaceTest, AmbiguousPrefix) {
  testing::WriteFile(ws_root_ / "k8s-20260224-190000-ffff-JAX-other.log", "x\n");
  Workspace ws(ws_root_);
  try {
    ws.Resolve("k8s-2026");
    FAIL();
  } catch (const WorkspaceError& e) {
    EXPECT_EQ(e.code(), WorkspaceError::Code::kAmbiguous);
    EXPECT_NE(std::string(e.what()).find("2 jobs"), std::string::npos) << e.what();
  }
}

TEST_F(WorkspaceTest, MissingWorkspaceIsAClearError) {
  try {
    Workspace ws(dir_.path() / "nope");
    FAIL();
  } catch (const WorkspaceError& e) {
    EXPECT_EQ(e.code(), WorkspaceError::Code::kNoWorkspace);
    EXPECT_NE(std::string(e.what()).find("--workspace"), std::string::npos);
  }
}

TEST(SlurmOutputNames, ParseTheCommonOutputPatterns) {
  auto id = [](const char* stem) { auto j = ParseLogName(stem); return j ? j->id + "|" + j->kind + "|" + j->rest : std::string("-"); };
  EXPECT_EQ(id("slurm-102"), "102|slurm|slurm");              // slurm-%j (Slurm's default)
  EXPECT_EQ(id("slurm-200_3"), "200_3|slurm|slurm");          // slurm-%A_%a (array task)
  EXPECT_EQ(id("train-llama-305"), "305|slurm|train-llama");  // %x-%j
  EXPECT_EQ(id("train-200_12"), "200_12|slurm|train");        // %x-%A_%a
  EXPECT_EQ(id("410"), "410|slurm|");                         // %j
  EXPECT_EQ(id("7877-JAX-llama2-70b"), "7877|slurm|JAX-llama2-70b");   // our launcher's name wins
  EXPECT_EQ(id("local_20260224_190000_a3f1-JAX-x"), "local_20260224_190000_a3f1|local|JAX-x");
  EXPECT_EQ(id("llama2-70b"), "-");                           // no trailing number: not a job
  EXPECT_EQ(id("run-v2"), "-");
  EXPECT_EQ(id("slurm-"), "-");
}

class SlurmOutputWorkspace : public ::testing::Test {
 protected:
  void SetUp() override {
    ws_ = dir_.path() / "outputs";
    WriteFile(ws_ / "slurm-102.out", "step 1\n");
    WriteFile(ws_ / "slurm-200_1.out", "a\n");
    WriteFile(ws_ / "slurm-200_2.out", "b\n");
    WriteFile(ws_ / "train-llama-305.out", "out\n");
    WriteFile(ws_ / "train-llama-305.err", "Traceback (most recent call last):\n");
    WriteFile(ws_ / "411.err", "only stderr\n");
    WriteFile(ws_ / "7877-JAX-llama2-70b.log", "JOB_ID=7877\n");
    fs::create_directories(ws_ / "llama2-70b/checkpoints");   // still not a job
    WriteFile(ws_ / "notes.txt", "not a log\n");
  }
  TempDir dir_;
  fs::path ws_;
};

TEST_F(SlurmOutputWorkspace, ListsPlainSlurmOutputsAsJobs) {
  Workspace ws(ws_);
  std::vector<std::string> ids;
  for (const auto& j : ws.List()) ids.push_back(j.id + ":" + j.log_display + ":" + j.err_log_display);
  EXPECT_EQ(ids, (std::vector<std::string>{"102:slurm-102.out:", "305:train-llama-305.out:train-llama-305.err",
                                           "411:411.err:", "7877:7877-JAX-llama2-70b.log:", "200_1:slurm-200_1.out:",
                                           "200_2:slurm-200_2.out:"}));
}

TEST_F(SlurmOutputWorkspace, ResolvesIdsArrayTasksAndStderr) {
  Workspace ws(ws_);
  JobFiles j = ws.Resolve("102");
  EXPECT_EQ(j.log_display, "slurm-102.out");
  EXPECT_EQ(j.kind, "slurm");
  EXPECT_EQ(ws.Resolve("200_2").log_display, "slurm-200_2.out");
  j = ws.Resolve("305");
  EXPECT_EQ(j.name, "train-llama");
  EXPECT_EQ(j.err_log_display, "train-llama-305.err");
  EXPECT_EQ(ws.Resolve("train-llama-305.out").err_log_display, "train-llama-305.err");
  try {
    ws.Resolve("200");
    FAIL() << "an array id names several tasks";
  } catch (const WorkspaceError& e) {
    EXPECT_EQ(e.code(), WorkspaceError::Code::kAmbiguous);
    EXPECT_NE(std::string(e.what()).find("200_1, 200_2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ws.Resolve("103"), WorkspaceError);
}

// The scheduler's record (here a locator standing in for scontrol; the real one is exercised
// against a real Slurm in launcher_slurm_submit) finds a job no file name matches, inside the
// workspace only.
TEST_F(SlurmOutputWorkspace, AJobIdNoFileNameMatchesIsFoundThroughTheScheduler) {
  WriteFile(ws_ / "runs/train.txt", "step 1\n");
  WriteFile(ws_ / "runs/train.stderr", "Traceback (most recent call last):\n");
  WriteFile(dir_.path() / "elsewhere.txt", "secret\n");
  const fs::path root = fs::canonical(ws_), outside = fs::canonical(dir_.path()) / "elsewhere.txt";
  Workspace::SetJobLocator([&](const std::string& id) -> std::vector<fs::path> {
    if (id == "501") return {root / "runs/train.txt", root / "runs/train.stderr"};
    if (id == "502") return {outside};
    if (id == "503") return {root / "runs/gone.txt"};
    return {};
  });
  Workspace ws(ws_);
  JobFiles j = ws.Resolve("501");
  EXPECT_EQ(j.id, "501");
  EXPECT_EQ(j.log_display, "runs/train.txt");
  EXPECT_EQ(j.err_log_display, "runs/train.stderr");
  try {
    ws.Resolve("502");
    ADD_FAILURE() << "output outside the workspace must not be read";
  } catch (const WorkspaceError& e) {
    EXPECT_EQ(e.code(), WorkspaceError::Code::kEscapes);
    EXPECT_NE(std::string(e.what()).find("outside the workspace"), std::string::npos);
  }
  try {
    ws.Resolve("503");
    ADD_FAILURE() << "a path that does not exist is no job";
  } catch (const WorkspaceError& e) {
    EXPECT_EQ(e.code(), WorkspaceError::Code::kNotFound);
  }
  EXPECT_EQ(ws.Resolve("102").log_display, "slurm-102.out");   // file names still come first
  Workspace::SetJobLocator(nullptr);
}

TEST(Nodelist, ExpandsSlurmHostLists) {
  EXPECT_EQ(*ExpandNodelist("chi[2845-2847,2865]"), (std::vector<std::string>{"chi2845", "chi2846", "chi2847", "chi2865"}));
  EXPECT_EQ(*ExpandNodelist("node[001-002],gpu5"), (std::vector<std::string>{"node001", "node002", "gpu5"}));
  EXPECT_EQ(*ExpandNodelist("single"), (std::vector<std::string>{"single"}));
  EXPECT_FALSE(ExpandNodelist("bad[3-1]"));
  EXPECT_FALSE(ExpandNodelist("bad[1-"));
  EXPECT_FALSE(ExpandNodelist("n[0-99999999]"));
  EXPECT_FALSE(ExpandNodelist(""));
}

}  // namespace
}  // namespace mt::tools
