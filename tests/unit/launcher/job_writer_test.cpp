#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <fstream>

#include "launcher/demo/workspace.h"
#include "launcher/sim/job_writer.h"
#include "launcher/sim/timeline.h"
#include "tests/unit/status_matchers.h"
#include "tests/unit/launcher/test_util.h"

namespace mt::launch::sim {
namespace {
using ::testing::HasSubstr;
using base::Errc;
using testing_status::IsOk;
using testing_status::StatusIs;

namespace fs = std::filesystem;

GenerateOptions NoTsdb() {
  GenerateOptions o;
  o.with_tsdb = false;  // promtool is exercised by the integration test
  return o;
}

TEST(JobWriter, LaysOutTheJobDirectoryLikeTheLauncher) {
  test::ScratchDir ws;
  const Scenario s = test::CaseStudy("8104");
  GenerateResult r;
  ASSERT_THAT(GenerateJob(s, ws.path(), NoTsdb(), &r), IsOk());
  const fs::path dir = ws.path() / "8104-JAX-llama3.1-405b-quantization_fp8-steps_60";
  EXPECT_EQ(r.job_dir, dir);
  EXPECT_TRUE(fs::is_regular_file(ws.path() / "8104-JAX-llama3.1-405b-quantization_fp8-steps_60.log"));
  EXPECT_EQ(fs::read_symlink(dir / "log"), "../8104-JAX-llama3.1-405b-quantization_fp8-steps_60.log");
  EXPECT_EQ(fs::canonical(dir / "log"), fs::canonical(r.log_path));
  const fs::path artifact = fs::read_symlink(dir / "artifact");
  EXPECT_EQ(artifact.string().rfind("../.artifacts/artifact_20260303_", 0), 0u) << artifact;
  EXPECT_TRUE(fs::is_regular_file(dir / "artifact" / "submit_cmd.txt"));
  EXPECT_TRUE(fs::is_regular_file(dir / "artifact" / "git_summary.txt"));
  EXPECT_NE(test::ReadAll(dir / "artifact" / "submit_cmd.txt").find("-N 8 -- quantization=fp8 steps=60"), std::string::npos);
  EXPECT_TRUE(fs::is_directory(dir / "prometheus"));
  EXPECT_TRUE(fs::is_regular_file(dir / "prometheus" / "prometheus.log"));
  EXPECT_TRUE(fs::is_regular_file(dir / "prometheus" / "ray_prometheus.yml"));
  for (int i = 2864; i <= 2871; ++i)
    EXPECT_TRUE(fs::is_regular_file(dir / "metrics_exporter" / ("chi" + std::to_string(i) + ".log")));
  EXPECT_EQ(r.event_file.parent_path(), dir / "llama3.1-405b_8104" / "tensorboard" / "llama3.1-405b_8104");
  EXPECT_EQ(r.event_file.filename().string().rfind("events.out.tfevents.", 0), 0u);
  EXPECT_NE(r.event_file.filename().string().find(".chi2864"), std::string::npos);
  // The head's Ray worker log holds task 0's lines without the srun label.
  bool worker = false;
  for (const auto& e : fs::directory_iterator(dir / "ray_logs" / "chi2864"))
    worker = worker || test::ReadAll(e.path()).find("\ncompleted step: 59,") != std::string::npos;
  EXPECT_TRUE(worker);
  // The log's mtime is the moment its last line was written.
  struct stat st {};
  ASSERT_EQ(stat(r.log_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mtime, static_cast<time_t>(BuildTimeline(s).job_end));
  // Nothing temporary is left behind.
  for (const auto& e : fs::directory_iterator(ws.path()))
    EXPECT_EQ(e.path().filename().string().find("partial"), std::string::npos) << e.path();
}

TEST(JobWriter, EventFileHoldsEveryStepsScalars) {
  test::ScratchDir ws;
  const Scenario s = test::CaseStudy("8104");
  GenerateResult r;
  ASSERT_THAT(GenerateJob(s, ws.path(), NoTsdb(), &r), IsOk());
  std::vector<test::DecodedEvent> events;
  std::string err;
  ASSERT_TRUE(test::DecodeEventFile(test::ReadAll(r.event_file), &events, &err)) << err;
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  const Timeline tl = BuildTimeline(s);
  int tgs_events = 0;
  for (const auto& e : events) {
    for (const auto& [tag, v] : e.values) {
      if (tag != "perf/per_device_tokens_per_sec") continue;
      ++tgs_events;
      const StepRecord& rec = tl.steps[static_cast<size_t>(e.step)];
      EXPECT_FLOAT_EQ(v, static_cast<float>(rec.tgs));
      EXPECT_NEAR(e.wall_time, rec.end, 0.1);
    }
  }
  EXPECT_EQ(tgs_events, 60);
}

TEST(JobWriter, RefusesToOverwriteAndLeavesNothingOnError) {
  test::ScratchDir ws;
  const Scenario s = test::CaseStudy("8105");
  ASSERT_THAT(GenerateJob(s, ws.path(), NoTsdb(), nullptr), IsOk());
  EXPECT_THAT(GenerateJob(s, ws.path(), NoTsdb(), nullptr), StatusIs(Errc::kConflict, HasSubstr("already exists")));
  EXPECT_THAT(GenerateJob(s, ws.path() / "missing", NoTsdb(), nullptr),
              StatusIs(Errc::kNotDirectory, HasSubstr("is not a directory")));

  // A promtool that fails: the job must not appear at all.
  test::ScratchDir ws2;
  GenerateOptions bad;
  bad.promtool.binary = "/bin/false";
  EXPECT_THAT(GenerateJob(s, ws2.path(), bad, nullptr), StatusIs(Errc::kFailed, HasSubstr("promtool failed")));
  EXPECT_TRUE(fs::is_empty(ws2.path()));
  GenerateOptions missing;
  missing.promtool.binary = "/nonexistent/promtool";
  EXPECT_THAT(GenerateJob(s, ws2.path(), missing, nullptr), StatusIs(Errc::kFailed, HasSubstr("exit 127")));
  EXPECT_TRUE(fs::is_empty(ws2.path()));
}

TEST(JobWriter, OutputIsByteIdenticalAcrossRuns) {
  test::ScratchDir a, b;
  const Scenario s = test::CaseStudy("8102");
  GenerateOptions o = NoTsdb();
  o.keep_openmetrics = true;
  GenerateResult ra, rb;
  ASSERT_THAT(GenerateJob(s, a.path(), o, &ra), IsOk());
  ASSERT_THAT(GenerateJob(s, b.path(), o, &rb), IsOk());
  EXPECT_EQ(test::ReadAll(ra.log_path), test::ReadAll(rb.log_path));
  EXPECT_EQ(test::ReadAll(ra.event_file), test::ReadAll(rb.event_file));
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(ra.job_dir / "prometheus-openmetrics")) {
    EXPECT_EQ(test::ReadAll(e.path()), test::ReadAll(rb.job_dir / "prometheus-openmetrics" / e.path().filename()));
    ++files;
  }
  EXPECT_GT(files, 0u);
}

TEST(DemoWorkspace, RejectsNonEmptyDirectoriesAndUnknownIds) {
  test::ScratchDir ws;
  std::ofstream(ws.path() / "something") << "x";
  demo::InitOptions o;
  o.with_tsdb = false;
  EXPECT_THAT(demo::InitWorkspace(ws.path(), o), StatusIs(Errc::kInvalid, HasSubstr("is not empty")));
  o.only = {"1234"};
  EXPECT_THAT(demo::InitWorkspace(ws.path() / "new", o),
              StatusIs(Errc::kInvalid, HasSubstr("no case study with job id 1234")));
  EXPECT_FALSE(fs::exists(ws.path() / "new"));
  o.only.clear();
  EXPECT_THAT(demo::InitWorkspace(ws.path() / "no" / "parent", o), StatusIs(Errc::kNotFound, HasSubstr("does not exist")));
  const auto ids = demo::DemoJobIds();
  for (const char* id : {"7877", "8308", "8309", "8043", "8101", "8102", "7938", "8104", "8105"})
    EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
}

TEST(DemoWorkspace, GeneratesTheRequestedJobsAtomically) {
  test::ScratchDir ws;
  demo::InitOptions o;
  o.with_tsdb = false;
  o.only = {"8105", "8043"};
  std::vector<std::string> progress;
  o.progress = [&](const std::string& line) { progress.push_back(line); };
  ASSERT_THAT(demo::InitWorkspace(ws.path() / "demo", o), IsOk());
  EXPECT_EQ(progress.size(), 2u);
  EXPECT_TRUE(fs::is_symlink(ws.path() / "demo" / "8105-JAX-llama3.1-405b-per_device_batch_size_8-steps_60" / "log"));
  EXPECT_TRUE(fs::is_regular_file(ws.path() / "demo" / "README.txt"));
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(ws.path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1u);  // only demo/, no leftovers
}

}  // namespace
}  // namespace mt::launch::sim
