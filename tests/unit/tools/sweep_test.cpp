// mt sweep's pure parts: the spec, the comparison against a baseline, and the reports.
#include <gtest/gtest.h>

#include "tools/gate/sweep_report.h"
#include "tools/gate/sweep_spec.h"

namespace mt::tools {
namespace {

TEST(SweepSpec, ParsesRunsAndDefaults) {
  SweepSpec s = ParseSweepSpec(
      "name: ci-smoke\nbackend: slurm\nscheduler: [-p, ci]\npassthrough: [steps=30]\nthreshold_pct: 4\n"
      "runs:\n  - model: llama2-70b\n    nodes: [1, 2]\n  - model: mixtral\n    passthrough: [per_device_batch_size=2]\n",
      "spec.yaml");
  EXPECT_EQ(s.name, "ci-smoke");
  EXPECT_EQ(s.scheduler_args, (std::vector<std::string>{"-p", "ci"}));
  EXPECT_DOUBLE_EQ(s.threshold_pct, 4);
  EXPECT_EQ(s.warmup_steps, 5);
  ASSERT_EQ(s.runs.size(), 2u);
  EXPECT_EQ(s.runs[0].nodes, (std::vector<int>{1, 2}));
  EXPECT_EQ(s.runs[1].nodes, (std::vector<int>{1}));
  EXPECT_EQ(s.runs[1].passthrough, (std::vector<std::string>{"per_device_batch_size=2"}));
}

void ExpectSpecError(const std::string& yaml, const std::string& needle) {
  try {
    ParseSweepSpec(yaml, "s.yaml");
    ADD_FAILURE() << "accepted: " << yaml;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("s.yaml", 0), 0u) << e.what();
  }
}

TEST(SweepSpec, SpecificErrors) {
  ExpectSpecError("runs: [", "not valid YAML");
  ExpectSpecError("- a\n", "YAML mapping");
  ExpectSpecError("name: x\n", "'runs' must be a non-empty list");
  ExpectSpecError("runs: []\n", "'runs' must be a non-empty list");
  ExpectSpecError("runz: 1\nruns: [{model: a}]\n", "unknown key 'runz'");
  ExpectSpecError("backend: k8s\nruns: [{model: a}]\n", "'backend' must be slurm or local");
  ExpectSpecError("name: a/../b\nruns: [{model: a}]\n", "'name' may hold only");
  ExpectSpecError("threshold_pct: 0\nruns: [{model: a}]\n", "'threshold_pct' must be between");
  ExpectSpecError("threshold_pct: lots\nruns: [{model: a}]\n", "'threshold_pct' must be a number");
  ExpectSpecError("runs: [{nodes: 1}]\n", "runs[0]: needs 'model'");
  ExpectSpecError("runs: [{model: a, nodes: [0]}]\n", "node count 0 is not positive");
  ExpectSpecError("runs: [{model: a, nodes: [1, 1]}]\n", "appears twice");
  ExpectSpecError("runs: [{model: a, node: 2}]\n", "unknown key 'node'");
  ExpectSpecError("passthrough: steps=3\nruns: [{model: a}]\n", "'passthrough' must be a list");
}

SweepResult Ok(const std::string& state, const std::string& model, int nodes, double tgs) {
  SweepResult r;
  r.state = state;
  r.model = model;
  r.nodes = nodes;
  r.status = "ok";
  r.tgs = tgs;
  r.job_id = state + "-" + model;
  return r;
}

SweepResult Failed(const std::string& state, const std::string& model, int nodes) {
  SweepResult r = Ok(state, model, nodes, 0);
  r.status = "failed";
  r.detail = "exit 1";
  return r;
}

TEST(SweepCompare, FlagsOnlyDropsBeyondTheThreshold) {
  auto c = CompareSweep({Ok("base", "a", 1, 3000), Ok("base", "b", 1, 3000), Ok("base", "c", 2, 1000)},
                        {Ok("head", "a", 1, 2700), Ok("head", "b", 1, 2880), Ok("head", "c", 2, 1100)}, 5);
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_EQ(c.rows[0].verdict, "regression");
  EXPECT_NEAR(*c.rows[0].delta_pct, -10.0, 1e-9);
  EXPECT_EQ(c.rows[1].verdict, "ok");   // -4 % is within 5 %
  EXPECT_EQ(c.rows[2].verdict, "improved");
  EXPECT_EQ(c.regressions, 1);
  EXPECT_EQ(c.new_failures, 0);
  EXPECT_TRUE(c.failed());
}

TEST(SweepCompare, NewFailuresFailStillFailingDoesNot) {
  auto c = CompareSweep({Ok("base", "a", 1, 3000), Failed("base", "b", 1)},
                        {Failed("head", "a", 1), Failed("head", "b", 1), Ok("head", "n", 1, 5)}, 5);
  EXPECT_EQ(c.rows[0].verdict, "new_failure");
  EXPECT_EQ(c.rows[1].verdict, "still_failing");
  EXPECT_EQ(c.rows[2].verdict, "new");
  EXPECT_EQ(c.new_failures, 1);
  EXPECT_TRUE(c.failed());
}

TEST(SweepCompare, UnmeasuredRunsFailTheSweep) {
  SweepResult timeout = Failed("head", "a", 1);
  timeout.status = "timeout";
  SweepResult base_timeout = timeout;
  base_timeout.state = "base";
  auto c = CompareSweep({base_timeout}, {timeout}, 5);
  EXPECT_EQ(c.rows[0].verdict, "error");
  EXPECT_EQ(c.errors, 1);
  EXPECT_TRUE(c.failed());
  std::string xml = SweepJUnit(c, "ci", 1);
  EXPECT_NE(xml.find("errors=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<error type=\"error\""), std::string::npos) << xml;
}

TEST(SweepCompare, IdenticalResultsPass) {
  auto c = CompareSweep({Ok("base", "a", 1, 3000)}, {Ok("head", "a", 1, 3000)}, 5);
  EXPECT_FALSE(c.failed());
  EXPECT_EQ(c.rows[0].verdict, "ok");
}

TEST(SweepReports, MarkdownAndJUnitNameTheRegression) {
  auto c = CompareSweep({Ok("base", "a", 1, 3000), Ok("base", "b|x", 2, 3000)},
                        {Ok("head", "a", 1, 2700), Ok("head", "b|x", 2, 3000)}, 5);
  std::string md = SweepMarkdown(c, "ci");
  EXPECT_NE(md.find("| a | 1 | 3000.0 | 2700.0 | -10.0 | **regression** |"), std::string::npos) << md;
  EXPECT_NE(md.find("| b\\|x | 2 |"), std::string::npos) << md;
  EXPECT_NE(md.find("**FAILED**: 1 regression(s), 0 new failure(s), 0 run(s) not measured"), std::string::npos) << md;
  std::string xml = SweepJUnit(c, "ci", 12.5);
  EXPECT_NE(xml.find("tests=\"2\" failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure type=\"regression\" message=\"a on 1 node: steady TGS 2700.0 vs 3000.0 (-10.0 %"),
            std::string::npos)
      << xml;
  EXPECT_EQ(xml.find("b|x\" name=\"nodes=2\">\n      <failure"), std::string::npos) << xml;
}

TEST(SweepReports, JUnitEscapesHostileText) {
  SweepResult bad = Failed("head", "m<&\"'>", 1);
  bad.detail = std::string("exit \x01 1 ]]> <x/>");
  auto c = CompareSweep({Ok("base", "m<&\"'>", 1, 1)}, {bad}, 5);
  std::string xml = SweepJUnit(c, "ci", 1);
  EXPECT_EQ(xml.find("<x/>"), std::string::npos);
  EXPECT_EQ(xml.find('\x01'), std::string::npos);
  EXPECT_NE(xml.find("m&lt;&amp;&quot;&apos;&gt;"), std::string::npos);
}

TEST(SweepBaseline, RoundTripsAndRejectsMalformedFiles) {
  auto j = SweepResultsToJson({Ok("head", "a", 2, 3123.5), Failed("head", "b", 1)}, "ci");
  auto back = SweepResultsFromJson(j, "b.json");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].model, "a");
  EXPECT_EQ(back[0].nodes, 2);
  EXPECT_DOUBLE_EQ(back[0].tgs, 3123.5);
  EXPECT_EQ(back[0].state, "baseline");
  EXPECT_EQ(back[1].status, "failed");
  EXPECT_THROW(SweepResultsFromJson(Json::array(), "b.json"), std::runtime_error);
  EXPECT_THROW(SweepResultsFromJson(Json{{"results", {{{"model", "a"}}}}}, "b.json"), std::runtime_error);
  EXPECT_THROW(SweepResultsFromJson(Json{{"results", {{{"model", "a"}, {"nodes", 1}, {"status", "ok"}, {"tgs", -1}}}}}, "b.json"),
               std::runtime_error);
}

}  // namespace
}  // namespace mt::tools
