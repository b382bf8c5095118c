// The approval gate's host side: the file-backed store (single use, expiry, hash binding,
// forged ids, several processes racing for one plan), the CI policy and the audit log.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "launcher/approval/audit.h"
#include "launcher/approval/policy.h"
#include "launcher/approval/store.h"
#include "test_util.h"
#include "tests/unit/status_matchers.h"

namespace mt::launch::approval {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using base::Errc;
using testing_status::IsOk;
using testing_status::StatusIs;
using test::ScratchDir;
using nlohmann::json;

PlanRecord Sample(const std::string& hash = std::string(64, 'a')) {
  PlanRecord r;
  r.kind = "submit";
  r.hash = hash;
  r.plan = {{"nodes", 2}};
  r.summary = "Plan aaaa\n";
  r.args_digest = "d";
  r.requester = "agent-1";
  r.requester_role = "agent";
  return r;
}

TEST(ApprovalStore, PendingThenApprovedOnceAndSurvivesARestart) {
  ScratchDir d;
  PlanRecord r = Sample(), out;
  {
    ApprovalStore s(d.path() / "approvals");
    ASSERT_THAT(s.Create(&r, 1000), IsOk());
    EXPECT_TRUE(ValidPlanId(r.id));
    EXPECT_EQ(r.state, "pending");
    EXPECT_EQ(r.expires, 1000 + 15 * 60);   // the default time to live
  }
  ApprovalStore again(d.path() / "approvals");   // a new server / the CLI: same files
  ASSERT_THAT(again.Get(r.id, 1001, &out), IsOk());
  EXPECT_EQ(out.state, "pending");
  EXPECT_EQ(out.requester, "agent-1");
  ASSERT_THAT(again.Decide(r.id, r.hash, true, "alice", "terminal", "", 1002, &out), IsOk());
  EXPECT_EQ(out.state, "approved");
  EXPECT_EQ(out.approver, "alice");
  // Single use: the same approval cannot be given (or replayed) twice.
  EXPECT_THAT(again.Decide(r.id, r.hash, true, "alice", "terminal", "", 1003, &out), StatusIs(Errc::kConflict, HasSubstr("not pending")));
  ASSERT_THAT(again.Finish(r.id, "4242", "ok", "", 1004, &out), IsOk());
  EXPECT_EQ(out.state, "submitted");
  EXPECT_EQ(out.job_id, "4242");
  EXPECT_THAT(again.Finish(r.id, "4243", "ok", "", 1005, &out), StatusIs(Errc::kConflict, HasSubstr("not approved")));
  EXPECT_THAT(again.Decide(r.id, r.hash, true, "bob", "web", "", 1006, &out), StatusIs(Errc::kConflict, HasSubstr("submitted, not pending")));
  // No temp files are left behind.
  for (const auto& e : fs::directory_iterator(d.path() / "approvals"))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
}

TEST(ApprovalStore, CreateOnceRecordsOnePlanPerIdHoweverOftenItIsAsked) {
  ScratchDir d;
  ApprovalStore s(d.path() / "approvals");
  PlanRecord a = Sample(), b = Sample(std::string(64, 'b'));
  a.id = b.id = std::string(32, 'c');
  bool created = false;
  ASSERT_THAT(s.CreateOnce(&a, 1000, &created), IsOk());
  EXPECT_TRUE(created);
  EXPECT_EQ(a.state, "pending");
  // Asked again (a supervisor restarted) with a rebuilt plan: the first record stands.
  ASSERT_THAT(s.CreateOnce(&b, 1010, &created), IsOk());
  EXPECT_FALSE(created);
  EXPECT_EQ(b.hash, a.hash);
  EXPECT_EQ(b.created, 1000);
  EXPECT_EQ(s.List(1011).size(), 1u);
  PlanRecord forged = Sample();
  forged.id = "../../etc/passwd";
  EXPECT_THAT(s.CreateOnce(&forged, 1012, &created), StatusIs(Errc::kInvalid, HasSubstr("not a plan id")));
}

TEST(ApprovalStore, ApprovalIsBoundToThePlanHash) {
  ScratchDir d;
  ApprovalStore s(d.path());
  PlanRecord r = Sample(std::string(64, 'b')), out;
  ASSERT_THAT(s.Create(&r, 10), IsOk());
  EXPECT_THAT(s.Decide(r.id, std::string(64, 'c'), true, "alice", "web", "", 11, &out), StatusIs(Errc::kConflict, HasSubstr("not the cccc")));
  EXPECT_THAT(s.Decide(r.id, "", true, "alice", "web", "", 11, &out), StatusIs(Errc::kConflict, HasSubstr("(none)")));
  // The plan edited on disk after it was shown: the approver's hash no longer matches.
  json j = json::parse(std::ifstream(d.path() / (r.id + ".json")));
  j["hash"] = std::string(64, 'e');
  std::ofstream(d.path() / (r.id + ".json")) << j.dump();
  EXPECT_THAT(s.Decide(r.id, std::string(64, 'b'), true, "alice", "web", "", 12, &out), StatusIs(Errc::kConflict, HasSubstr("has hash eeee")));
  ASSERT_THAT(s.Get(r.id, 12, &out), IsOk());
  EXPECT_EQ(out.state, "pending");
}

TEST(ApprovalStore, ExpiresAfterItsTimeToLive) {
  ScratchDir d;
  ApprovalStore s(d.path(), std::chrono::seconds(60));
  PlanRecord r = Sample(), out;
  ASSERT_THAT(s.Create(&r, 100), IsOk());
  EXPECT_THAT(s.Decide(r.id, r.hash, true, "alice", "web", "", 160, &out), StatusIs(Errc::kConflict, HasSubstr("expired, not pending")));
  ASSERT_THAT(s.Get(r.id, 161, &out), IsOk());
  EXPECT_EQ(out.state, "expired");
  EXPECT_EQ(s.List(161).at(0).state, "expired");
}

TEST(ApprovalStore, ForgedIdsNameNoFile) {
  ScratchDir d;
  ApprovalStore s(d.path() / "a");
  PlanRecord out;
  std::ofstream(d.path() / "secret.json") << "{}";
  for (const std::string& id : std::vector<std::string>{"../secret", "", "0123", std::string(32, 'g'), std::string(31, 'a') + "/",
                         std::string(32, 'A'), std::string(32, 'a')})
    EXPECT_THAT(s.Get(id, 1, &out), StatusIs(Errc::kNotFound, HasSubstr("no such plan"))) << id;
  EXPECT_FALSE(ValidPlanId("../../../../etc/passwd"));
}

TEST(ApprovalStore, ConcurrentApprovalsOfOnePlanHaveOneWinner) {
  ScratchDir d;
  ApprovalStore s(d.path());
  PlanRecord r = Sample(), out;
  ASSERT_THAT(s.Create(&r, UnixNow()), IsOk());
  // Separate processes, as two servers (or a server and `mt approve`) on a shared filesystem.
  constexpr int kRacers = 8;
  std::vector<pid_t> pids;
  for (int i = 0; i < kRacers; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ApprovalStore mine(d.path());
      PlanRecord rec;
      base::Status e = mine.Decide(r.id, r.hash, true, "racer" + std::to_string(i), "web", "", UnixNow(), &rec);
      if (e.ok()) e = mine.Finish(r.id, "job" + std::to_string(i), "", "", UnixNow(), &rec);
      _exit(e.ok() ? 0 : 1);
    }
    pids.push_back(pid);
  }
  int winners = 0;
  for (pid_t p : pids) {
    int status = 0;
    waitpid(p, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    winners += WEXITSTATUS(status) == 0;
  }
  EXPECT_EQ(winners, 1);
  ASSERT_THAT(s.Get(r.id, UnixNow(), &out), IsOk());
  EXPECT_EQ(out.state, "submitted");
  EXPECT_EQ(out.job_id, "job" + out.approver.substr(5));
}

TEST(AuditLog, AppendsOneJsonLinePerEventAndFailsLoudly) {
  ScratchDir d;
  AuditLog log(d.path() / "sub" / "audit.jsonl");
  ASSERT_THAT(log.Append({{"event", "requested"}, {"plan_id", "p1"}}), IsOk());
  ASSERT_THAT(log.Append({{"event", "refused"}, {"reason", "line\nbreak"}}), IsOk());
  std::ifstream in(log.file());
  std::string l1, l2, l3;
  std::getline(in, l1);
  std::getline(in, l2);
  EXPECT_FALSE(std::getline(in, l3));
  EXPECT_EQ(json::parse(l1)["event"], "requested");
  EXPECT_THAT(json::parse(l1)["time"].get<std::string>(), ::testing::MatchesRegex("....-..-..T..:..:..Z"));
  EXPECT_EQ(json::parse(l2)["reason"], "line\nbreak");
  fs::create_directories(d.path() / "dir-not-file");
  EXPECT_THAT(AuditLog(d.path() / "dir-not-file").Append({{"event", "x"}}), StatusIs(Errc::kIo, HasSubstr("cannot open audit log")));
}

Plan CiPlan(int nodes, std::vector<std::string> sched, std::vector<std::string> passthrough, std::string backend = "slurm") {
  PlanRequest req;
  req.model_spec = "llama2-70b";
  req.backend = backend;
  req.nodes = nodes;
  req.scheduler_args = std::move(sched);
  req.passthrough = std::move(passthrough);
  req.workspace = fs::temp_directory_path();
  req.models_dir = fs::path(MT_SOURCE_DIR) / "configs" / "models";
  req.mt_job = "/usr/bin/mt-job";
  req.simtrain = "/usr/bin/mt-simtrain";
  Plan p;
  EXPECT_THAT(BuildPlan(req, &p), IsOk());
  return p;
}

Policy CiPolicy() {
  return PolicyFromYaml(YAML::Load(R"(
ci:
  backends: [slurm]
  max_nodes: 8
  max_steps: 50
  partitions: [ci]
  settings: {dataset_type: [synthetic]}
)"));
}

TEST(Policy, CiRunsWhatItsRuleAllows) {
  const Policy p = CiPolicy();
  auto ok = EvaluatePolicy(p, "ci", CiPlan(8, {"--partition=ci", "--time=10"}, {"steps=50", "dataset_type=synthetic"}));
  EXPECT_TRUE(ok.allowed) << ok.Explain();
  EXPECT_EQ(ok.Explain(), "allowed by policy.ci");
  EXPECT_TRUE(EvaluatePolicy(p, "ci", CiPlan(1, {"-p", "ci"}, {"steps=5", "dataset_type=synthetic"})).allowed);
}

TEST(Policy, EveryViolationIsNamed) {
  const Policy p = CiPolicy();
  auto d = EvaluatePolicy(p, "ci", CiPlan(9, {"--partition=gpu", "--nodelist=n1"}, {"steps=51", "dataset_type=tfds"}));
  EXPECT_FALSE(d.allowed);
  const std::string why = d.Explain();
  for (const char* s : {"9 nodes exceeds max_nodes 8", "steps=51 exceeds max_steps 50", "dataset_type=tfds is not one of",
                        "--nodelist is not allowed", "partition gpu is not one of [ci]"})
    EXPECT_THAT(why, HasSubstr(s));
  // The model's own steps (50 in llama2-70b) count when no override is given; a missing
  // partition and an unset setting are refusals, not defaults.
  auto d2 = EvaluatePolicy(p, "ci", CiPlan(1, {}, {}));
  EXPECT_THAT(d2.Explain(), HasSubstr("no partition given"));
  EXPECT_THAT(d2.Explain(), HasSubstr("dataset_type is unset"));
  EXPECT_FALSE(EvaluatePolicy(p, "ci", CiPlan(1, {}, {"dataset_type=synthetic"}, "local")).allowed);
  // The last override wins, as in the training command.
  EXPECT_FALSE(EvaluatePolicy(p, "ci", CiPlan(1, {"-pci"}, {"dataset_type=synthetic", "steps=10", "steps=500"})).allowed);
}

TEST(Policy, EnvPassthroughCanBeNarrowedPerRole) {
  const Policy p = PolicyFromYaml(YAML::Load("ci: {partitions: [ci], env: [XLA_FLAGS, \"NCCL_*\"]}\n"));
  auto ok = EvaluatePolicy(p, "ci", CiPlan(1, {"-p", "ci"}, {"_env_XLA_FLAGS=--xla_dump_to=/tmp/d", "_env_NCCL_DEBUG=INFO"}));
  EXPECT_TRUE(ok.allowed) << ok.Explain();
  auto no = EvaluatePolicy(p, "ci", CiPlan(1, {"-p", "ci"}, {"_env_TORCH_CPP_LOG_LEVEL=INFO"}));
  EXPECT_FALSE(no.allowed);
  EXPECT_THAT(no.Explain(), HasSubstr("environment variable TORCH_CPP_LOG_LEVEL is not allowed for this role"));
}

TEST(Policy, OnlyRolesWithARuleAreAutoApproved) {
  const Policy p = CiPolicy();
  const Plan plan = CiPlan(1, {"--partition=ci"}, {"steps=5", "dataset_type=synthetic"});
  EXPECT_FALSE(EvaluatePolicy(p, "agent", plan).allowed);
  EXPECT_TRUE(EvaluatePolicy(p, "agent", plan).rule.empty());
  EXPECT_FALSE(EvaluatePolicy(Policy{}, "ci", plan).allowed);
  EXPECT_FALSE(EvaluateCancelPolicy(p, "ci").allowed);
  EXPECT_TRUE(EvaluateCancelPolicy(PolicyFromYaml(YAML::Load("ci: {cancel: true}")), "ci").allowed);
}

TEST(Policy, BadRulesAreRejectedByName) {
  EXPECT_THROW(PolicyFromYaml(YAML::Load("robot: {max_nodes: 1}")), std::runtime_error);
  try {
    PolicyFromYaml(YAML::Load("ci: {max_node: 1}"));
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("policy.ci: unknown key 'max_node'"));
  }
}

}  // namespace
}  // namespace mt::launch::approval
