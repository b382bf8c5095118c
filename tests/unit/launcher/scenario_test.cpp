#include <gtest/gtest.h>

#include "launcher/demo/embedded_scenarios.h"
#include "base/hostlist.h"
#include "launcher/sim/scenario.h"

namespace mt::launch::sim {
namespace {

using base::CompactHostList;
using base::ExpandHostList;

constexpr const char* kMinimal = R"(
job:
  id: "42"
  model: llama2-70b
  hosts: "node[001-002]"
  start: "2026-01-01T00:00:00Z"
)";

std::string ParseError(const std::string& yaml) {
  Scenario s;
  std::string err;
  EXPECT_FALSE(ParseScenario(yaml, "x.yaml", &s, &err));
  return err;
}

TEST(HostList, CompactsAndExpands) {
  EXPECT_EQ(CompactHostList({"chi2801", "chi2802", "chi2803", "chi2810"}), "chi[2801-2803,2810]");
  EXPECT_EQ(CompactHostList({"node001"}), "node001");
  EXPECT_EQ(CompactHostList({"a1", "a2", "login"}), "a[1-2],login");
  std::vector<std::string> hosts;
  ASSERT_TRUE(ExpandHostList("node[001-003,010]", &hosts));
  EXPECT_EQ(hosts, (std::vector<std::string>{"node001", "node002", "node003", "node010"}));
  ASSERT_TRUE(ExpandHostList("chi[2818-2835,2880-2885]", &hosts));
  EXPECT_EQ(hosts.size(), 24u);
  EXPECT_EQ(CompactHostList(hosts), "chi[2818-2835,2880-2885]");
}

TEST(HostList, RejectsMalformed) {
  std::vector<std::string> hosts;
  EXPECT_FALSE(ExpandHostList("", &hosts));
  EXPECT_FALSE(ExpandHostList("node[3-1]", &hosts));
  EXPECT_FALSE(ExpandHostList("node[1-2", &hosts));
  EXPECT_FALSE(ExpandHostList("node[a-b]", &hosts));
  EXPECT_FALSE(ExpandHostList("node[[1]]", &hosts));
  EXPECT_FALSE(ExpandHostList("a,,b", &hosts));
}

TEST(Scenario, MinimalScenarioGetsDefaults) {
  Scenario s;
  std::string err;
  ASSERT_TRUE(ParseScenario(kMinimal, "", &s, &err)) << err;
  EXPECT_EQ(s.hosts, (std::vector<std::string>{"node001", "node002"}));
  EXPECT_EQ(s.gpus_per_node, 8);
  EXPECT_EQ(s.JobName(), "JAX-llama2-70b");
  EXPECT_EQ(s.JobDirName(), "42-JAX-llama2-70b");
  EXPECT_EQ(s.PeakTflops(), 2500);
  EXPECT_EQ(s.start, 1767225600);
}

TEST(Scenario, ExpTagTransformsPassthroughLikeTheLauncher) {
  Scenario s;
  std::string err;
  ASSERT_TRUE(ParseScenario(std::string(kMinimal) + "  exp_tag: mytag\n  passthrough: [remat_policy=full, _env_NCCL_DEBUG=INFO, --flag=1]\n", "", &s, &err)) << err;
  EXPECT_EQ(s.ExpTag(), "mytag-remat_policy_full-_env_NCCL_DEBUG_INFO-flag_1");
  EXPECT_EQ(s.JobName(), "JAX-llama2-70b-mytag-remat_policy_full-_env_NCCL_DEBUG_INFO-flag_1");
}

TEST(Scenario, ErrorsNameTheOffendingKey) {
  EXPECT_EQ(ParseError("job: [1, 2]"), "x.yaml: job: required map");
  EXPECT_NE(ParseError(std::string(kMinimal) + "  colour: red\n").find("job: unknown key 'colour'"), std::string::npos);
  EXPECT_NE(ParseError(std::string(kMinimal) + "traning:\n  steps: 3\n").find("unknown top-level key 'traning'"), std::string::npos);
  EXPECT_NE(ParseError(std::string(kMinimal) + "training:\n  steps: many\n").find("training.steps: expected an integer"), std::string::npos);
  EXPECT_NE(ParseError(std::string(kMinimal) + "faults:\n  - kind: meteor\n").find("faults[0].kind: 'meteor' is not one of hang, oom"), std::string::npos);
  EXPECT_NE(ParseError(std::string(kMinimal) + "faults:\n  - kind: rdma_retransmits\n    hosts: [node999]\n").find("'node999' is not in job.hosts"), std::string::npos);
  EXPECT_NE(ParseError(std::string(kMinimal) + "faults:\n  - kind: heartbeat\n    tasks: [5]\n").find("task 5 does not exist"), std::string::npos);
  EXPECT_NE(ParseError(std::string(kMinimal) + "faults:\n  - kind: hang\n  - kind: oom\n").find("at most one fault may end the job"), std::string::npos);
  EXPECT_NE(ParseError(std::string(kMinimal) + "faults:\n  - kind: thermal\n    hosts: [node001]\n    steps: [9, 3]\n").find("first <= last"), std::string::npos);
  EXPECT_NE(ParseError("job:\n  id: \"../x\"\n  model: m\n  hosts: a\n  start: \"2026-01-01T00:00:00Z\"\n").find("job.id"), std::string::npos);
  EXPECT_NE(ParseError("job:\n  id: \"1\"\n  model: m\n  hosts: a\n  start: yesterday\n").find("job.start"), std::string::npos);
  EXPECT_NE(ParseError("job:\n  id: \"1\"\n  model: m\n  hosts: \"a[2-1]\"\n  start: \"2026-01-01T00:00:00Z\"\n").find("malformed host list"), std::string::npos);
  EXPECT_NE(ParseError("{{{").find("invalid YAML"), std::string::npos);
  EXPECT_NE(ParseError(std::string(kMinimal) + "training:\n  first_step: 5\n  steps: 5\n").find("first_step"), std::string::npos);
}

TEST(Scenario, IsoTime) {
  double t = 0;
  ASSERT_TRUE(ParseIsoTime("2026-02-24T19:21:00Z", &t));
  EXPECT_EQ(FormatIsoTime(t), "2026-02-24T19:21:00Z");
  EXPECT_FALSE(ParseIsoTime("2026-02-24 19:21:00", &t));
  EXPECT_FALSE(ParseIsoTime("2026-13-01T00:00:00Z", &t));
  EXPECT_FALSE(ParseIsoTime("2026-02-24T19:21:00Zjunk", &t));
}

TEST(Scenario, EveryEmbeddedCaseStudyParses) {
  ASSERT_GE(demo::EmbeddedScenarios().size(), 9u);
  for (const auto& e : demo::EmbeddedScenarios()) {
    Scenario s;
    std::string err;
    EXPECT_TRUE(ParseScenario(e.yaml, e.file_name, &s, &err)) << err;
    EXPECT_EQ(std::string(e.file_name).rfind(s.job_id + "-", 0), 0u) << e.file_name << " holds job " << s.job_id;
  }
}

}  // namespace
}  // namespace mt::launch::sim
