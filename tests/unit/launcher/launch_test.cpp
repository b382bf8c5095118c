// Unit tests for launcher/launch: model names, model configs, the plan (names, limits, hash,
// JSON round trip, passthrough as data), display quoting, the k8s manifest, the simulator
// scenario and the artifact snapshot.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <ctime>
#include <fstream>
#include <regex>

#include "launcher/launch/artifact.h"
#include "launcher/launch/k8s_manifest.h"
#include "launcher/launch/model_config.h"
#include "launcher/launch/plan.h"
#include "launcher/launch/process.h"
#include "launcher/launch/restart_plan.h"
#include "launcher/launch/slurm_job_files.h"
#include "launcher/sim/scenario.h"
#include "tests/unit/status_matchers.h"
#include "tests/unit/launcher/test_util.h"

namespace mt::launch {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;
using base::Errc;
using testing_status::IsOk;
using testing_status::StatusIs;
using test::ScratchDir;

const fs::path kModels = fs::path(MT_SOURCE_DIR) / "configs" / "models";

TEST(LaunchModelSpec, PeelsColonsFromTheRight) {
  ModelSpec s;
  EXPECT_THAT(ParseModelSpec("llama2-70b", &s), IsOk());
  EXPECT_EQ(s.model, "llama2-70b");
  EXPECT_EQ(s.alias, "");
  EXPECT_EQ(s.tag, "");
  EXPECT_THAT(ParseModelSpec("llama2-70b:exp1", &s), IsOk());
  EXPECT_EQ(s.model, "llama2-70b");
  EXPECT_EQ(s.tag, "exp1");
  EXPECT_THAT(ParseModelSpec("405b:mine:run2", &s), IsOk());
  EXPECT_EQ(s.model, "405b");
  EXPECT_EQ(s.alias, "mine");
  EXPECT_EQ(s.tag, "run2");
  EXPECT_THAT(ParseModelSpec("405b:mine:", &s), IsOk());   // trailing colon: alias without tag
  EXPECT_EQ(s.alias, "mine");
  EXPECT_EQ(s.tag, "");
  EXPECT_THAT(ParseModelSpec("a:b:c:d", &s), StatusIs(Errc::kInvalid, HasSubstr("3 colons")));
  EXPECT_THAT(ParseModelSpec(":tag", &s), StatusIs(Errc::kInvalid, HasSubstr("no model name")));
  EXPECT_THAT(ParseModelSpec("llama/../x", &s), StatusIs(Errc::kInvalid, HasSubstr("may only contain")));
}

TEST(LaunchModelNames, ShortNamesResolveLikeTheOriginal) {
  std::string r, err;
  ASSERT_TRUE(ResolveModelName(kModels, "llama2-70b", &r, &err)) << err;
  EXPECT_EQ(r, "llama2-70b");
  ASSERT_TRUE(ResolveModelName(kModels, "405b", &r, &err)) << err;
  EXPECT_EQ(r, "llama3.1-405b");
  ASSERT_TRUE(ResolveModelName(kModels, "mixtral", &r, &err)) << err;
  EXPECT_EQ(r, "mixtral-8x22b");
  ASSERT_TRUE(ResolveModelName(kModels, "deepseek", &r, &err)) << err;
  EXPECT_EQ(r, "deepseek3-671b");
}

TEST(LaunchModelNames, AmbiguousNamesListEveryCandidate) {
  std::string r, err;
  EXPECT_FALSE(ResolveModelName(kModels, "70b", &r, &err));
  EXPECT_EQ(err, "ambiguous model '70b' matches 3 configs: llama2-70b, llama3-70b, llama3.1-70b. Use a longer name.");
  EXPECT_FALSE(ResolveModelName(kModels, "grok", &r, &err));
  EXPECT_THAT(err, HasSubstr("grok-1, grok-2"));
  EXPECT_FALSE(ResolveModelName(kModels, "qwen3", &r, &err));
  EXPECT_THAT(err, HasSubstr("3 configs"));
}

TEST(LaunchModelNames, UnknownNameListsSupportedModels) {
  std::string r, err;
  EXPECT_FALSE(ResolveModelName(kModels, "gpt5", &r, &err));
  EXPECT_THAT(err, HasSubstr("unknown model 'gpt5'. Supported models: deepseek3-671b, default, grok-1"));
  EXPECT_FALSE(ResolveModelName("/nonexistent/models", "x", &r, &err));
  EXPECT_THAT(err, HasSubstr("does not exist"));
}

TEST(LaunchModelNames, ExactNameWinsOverSubstrings) {
  ScratchDir d;
  std::ofstream(d.path() / "a.yml") << "steps: 1\n";
  std::ofstream(d.path() / "ab.yml") << "steps: 1\n";
  std::string r, err;
  ASSERT_TRUE(ResolveModelName(d.path(), "a", &r, &err)) << err;
  EXPECT_EQ(r, "a");
  ASSERT_TRUE(ResolveModelName(d.path(), "b", &r, &err)) << err;
  EXPECT_EQ(r, "ab");
}

TEST(LaunchModelConfigs, EveryShippedConfigLoads) {
  const auto names = ListModels(kModels);
  ASSERT_GE(names.size(), 10u);
  for (const auto& n : names) {
    ModelConfig c;
    EXPECT_THAT(LoadModelConfig(kModels, n, &c), IsOk()) << n;
    EXPECT_GT(c.tgs_low, 0) << n;
    EXPECT_GE(c.tgs_high, c.tgs_low) << n;
  }
  ModelConfig ds;
  ASSERT_THAT(LoadModelConfig(kModels, "deepseek3-671b", &ds), IsOk());
  EXPECT_EQ(ds.env.at("XLA_PYTHON_CLIENT_MEM_FRACTION"), ".93");
  EXPECT_TRUE(ds.moe);
}

TEST(LaunchModelConfigs, BadFilesGiveSpecificErrors) {
  ScratchDir d;
  ModelConfig c;
  std::ofstream(d.path() / "typo.yml") << "stepz: 3\n";
  EXPECT_THAT(LoadModelConfig(d.path(), "typo", &c), StatusIs(Errc::kInvalid, HasSubstr("unknown key 'stepz'")));
  std::ofstream(d.path() / "band.yml") << "tgs_band: [5]\n";
  EXPECT_THAT(LoadModelConfig(d.path(), "band", &c), StatusIs(Errc::kInvalid, HasSubstr("tgs_band must be [low, high]")));
  std::ofstream(d.path() / "neg.yml") << "steps: 0\n";
  EXPECT_THAT(LoadModelConfig(d.path(), "neg", &c), StatusIs(Errc::kInvalid, HasSubstr("must be >= 1")));
  std::ofstream(d.path() / "env.yml") << "steps: 1\n";
  std::ofstream(d.path() / "env.env") << "# comment\nGOOD=1\n1BAD=2\n";
  EXPECT_THAT(LoadModelConfig(d.path(), "env", &c), StatusIs(Errc::kInvalid, HasSubstr("env.env:3: expected KEY=VALUE")));
}

TEST(LaunchExpTag, TransformsPassthroughLikeSubmitSh) {
  EXPECT_EQ(MakeExpTag("", {"remat_policy=full", "_env_NCCL_DEBUG=INFO"}), "remat_policy_full-_env_NCCL_DEBUG_INFO");
  EXPECT_EQ(MakeExpTag("exp1", {"--steps=5", "-x"}), "exp1-steps_5-x");
  // A '/', '%' or quote never reaches a file name or sbatch's --output pattern.
  EXPECT_EQ(MakeExpTag("", {"run_name=a/b%j'c"}), "run_name_a_b_j_c");
}

PlanRequest Request(const fs::path& ws) {
  PlanRequest r;
  r.model_spec = "llama2-70b";
  r.workspace = ws;
  r.models_dir = kModels;
  r.mt_job = "/opt/mt/bin/mt-job";
  r.simtrain = "/opt/mt/bin/mt-simtrain";
  r.now_utc = "20260224_190000";
  r.rand_hex = "a3f1";
  return r;
}

TEST(LaunchPlan, ResolvesNamesPathsAndCommand) {
  ScratchDir d;
  PlanRequest r = Request(d.path());
  r.model_spec = "405b:mine:exp";
  r.passthrough = {"steps=7", "", "_env_NCCL_DEBUG='INFO'"};
  Plan p;
  ASSERT_THAT(BuildPlan(r, &p), IsOk());
  EXPECT_EQ(p.spec.model, "llama3.1-405b");
  EXPECT_EQ(p.job_id, "local_20260224_190000_a3f1");
  EXPECT_EQ(p.job_name, "JAX-llama3.1-405b-exp-steps_7-_env_NCCL_DEBUG__INFO_");
  EXPECT_EQ(p.passthrough, (std::vector<std::string>{"steps=7", "_env_NCCL_DEBUG='INFO'"}));   // empty arg dropped
  EXPECT_EQ(p.overrides, (std::vector<std::string>{"steps=7"}));
  EXPECT_EQ(p.env.at("NCCL_DEBUG"), "INFO");   // one layer of matching quotes removed
  EXPECT_EQ(p.model.at("steps"), "7");
  EXPECT_EQ(p.artifact_dir, fs::absolute(d.path()) / ".artifacts" / "artifact_20260224_190000_a3f1");
  EXPECT_EQ(p.job_dir.filename(), "local_20260224_190000_a3f1-" + p.job_name);
  EXPECT_EQ(p.submit_argv, (std::vector<std::string>{"/opt/mt/bin/mt-job", "run", (p.artifact_dir / "plan.json").string()}));
}

TEST(LaunchPlan, SlurmCommandLineKeepsSchedulerArgsVerbatim) {
  ScratchDir d;
  PlanRequest r = Request(d.path());
  r.backend = "slurm";
  r.nodes = 4;
  r.scheduler_args = {"--time=10", "-p", "big queue", "--exclude=chi[2801-2803]"};
  Plan p;
  ASSERT_THAT(BuildPlan(r, &p), IsOk());
  EXPECT_EQ(p.job_id, "");
  const std::vector<std::string> want = {
      "sbatch", "--parsable", "--hold", "--job-name=JAX-llama2-70b",
      "--output=" + (fs::absolute(d.path()) / "%j-JAX-llama2-70b.log").string(), "--nodes=4", "--ntasks-per-node=1",
      "--time=10", "-p", "big queue", "--exclude=chi[2801-2803]", (p.artifact_dir / "job.sbatch").string()};
  EXPECT_EQ(p.submit_argv, want);
  r.pack_tasks = true;
  ASSERT_THAT(BuildPlan(r, &p), IsOk());
  EXPECT_THAT(p.submit_argv, ::testing::IsSupersetOf({"--nodes=1", "--ntasks=4", "--overcommit"}));
}

TEST(RestartPlan, RecordsItsLineageInThePlanTheHashAndTheTasksEnvironment) {
  ScratchDir d;
  PlanRequest r = Request(d.path());
  r.backend = "slurm";
  r.nodes = 4;
  r.scheduler_args = {"-p", "ci", "--exclude=old-1"};
  r.passthrough = {"steps=30"};
  Plan parent;
  ASSERT_THAT(BuildPlan(r, &parent), IsOk());
  EXPECT_FALSE(parent.ToJson().contains("restart"));   // plans without one keep their old hash
  Plan restart;
  ASSERT_THAT(BuildRestartPlan(parent, PlanRestart{"8311", 1, {"gpu-07"}, 200}, &restart), IsOk());
  EXPECT_EQ(restart.model, parent.model);
  EXPECT_EQ(restart.passthrough, parent.passthrough);
  EXPECT_NE(restart.hash, parent.hash);
  // One --exclude: the user's own, then ours.
  EXPECT_EQ(restart.scheduler_args, (std::vector<std::string>{"-p", "ci", "--exclude=old-1,gpu-07"}));
  EXPECT_THAT(restart.submit_argv, ::testing::Contains("--exclude=old-1,gpu-07"));
  r.scheduler_args = {"-x", "chi[1-3],old-1", "-p", "ci"};   // the two-argument form, a host list
  ASSERT_THAT(BuildPlan(r, &parent), IsOk());
  Plan other;
  ASSERT_THAT(BuildRestartPlan(parent, PlanRestart{"8311", 1, {"old-1", "gpu-07"}, 200}, &other), IsOk());
  EXPECT_EQ(other.scheduler_args, (std::vector<std::string>{"-p", "ci", "--exclude=chi[1-3],old-1,gpu-07"}));
  EXPECT_EQ(restart.env.at("MT_RESTART_OF"), "8311");
  EXPECT_EQ(restart.env.at("MT_RESTART_ATTEMPT"), "1");
  EXPECT_EQ(restart.env.at("MT_RESUME_STEP"), "200");
  EXPECT_THAT(DescribePlan(restart), HasSubstr("restart of:   job 8311 (attempt 1): cancels it first if it still runs; "
                                               "resumes from the checkpoint of step 200; excludes gpu-07"));
  // Through JSON and back, hash checked; a second restart keeps the first one's exclusion.
  Plan back;
  ASSERT_THAT(PlanFromJson(restart.ToJson(), &back), IsOk());
  ASSERT_TRUE(back.restart.has_value());
  EXPECT_EQ(back.restart->resume_step, 200);
  Plan second;
  ASSERT_THAT(BuildRestartPlan(back, PlanRestart{"8312", 2, {"gpu-09"}, std::nullopt}, &second), IsOk());
  EXPECT_EQ(second.restart->exclude, (std::vector<std::string>{"gpu-07", "gpu-09"}));
  EXPECT_THAT(second.submit_argv, ::testing::Contains("--exclude=old-1,gpu-07,gpu-09"));
  EXPECT_EQ(second.env.count("MT_RESUME_STEP"), 0u);
  EXPECT_THAT(DescribePlan(second), HasSubstr("resumes from the start"));
  // Edited lineage fails the hash.
  nlohmann::json j = restart.ToJson();
  j["restart"]["exclude"] = nlohmann::json::array();
  EXPECT_THAT(PlanFromJson(j, &back), StatusIs(Errc::kInvalid, HasSubstr("does not match its hash")));
}

TEST(RestartPlan, BadLineageIsRefusedAndOnlySlurmCanExclude) {
  ScratchDir d;
  PlanRequest r = Request(d.path());
  Plan parent, out;
  ASSERT_THAT(BuildPlan(r, &parent), IsOk());
  EXPECT_THAT(BuildRestartPlan(parent, PlanRestart{"", 1, {}, std::nullopt}, &out), StatusIs(Errc::kInvalid, HasSubstr("parent job")));
  EXPECT_THAT(BuildRestartPlan(parent, PlanRestart{"7", 0, {}, std::nullopt}, &out), StatusIs(Errc::kInvalid, HasSubstr("attempt")));
  EXPECT_THAT(BuildRestartPlan(parent, PlanRestart{"7", 1, {}, -3}, &out), StatusIs(Errc::kInvalid, HasSubstr("resume step")));
  EXPECT_THAT(BuildRestartPlan(parent, PlanRestart{"7", 1, {"gpu-07"}, 5}, &out),
              StatusIs(Errc::kInvalid, HasSubstr("the local backend cannot keep a job off hosts")));
  r.backend = "slurm";
  ASSERT_THAT(BuildPlan(r, &parent), IsOk());
  EXPECT_THAT(BuildRestartPlan(parent, PlanRestart{"7", 1, {"a,b"}, 5}, &out), StatusIs(Errc::kInvalid, HasSubstr("not a host name")));
  EXPECT_THAT(BuildRestartPlan(parent, PlanRestart{"7", 1, {"--partition=x"}, 5}, &out), StatusIs(Errc::kInvalid, HasSubstr("not a host name")));
  // The local backend cannot exclude: UsableExclusions drops them and says why.
  r.backend = "local";
  ASSERT_THAT(BuildPlan(r, &parent), IsOk());
  std::vector<std::string> exclude = {"gpu-07"};
  std::string note;
  UsableExclusions(parent, &exclude, &note);
  EXPECT_TRUE(exclude.empty());
  EXPECT_THAT(note, HasSubstr("not excluded (gpu-07): the local backend cannot keep a job off hosts"));
}

TEST(LaunchPlan, JobNameLimitIs243Bytes) {
  ScratchDir d;
  PlanRequest r = Request(d.path());
  r.model_spec = "default";
  Plan p;
  // "JAX-default-" is 12 bytes, "k=" becomes "k_": 14 + n.
  r.passthrough = {"k=" + std::string(229, 'x')};
  ASSERT_THAT(BuildPlan(r, &p), IsOk());
  EXPECT_EQ(p.job_name.size(), 243u);
  r.passthrough = {"k=" + std::string(230, 'x')};
  EXPECT_THAT(BuildPlan(r, &p), StatusIs(Errc::kInvalid, HasSubstr("job name is 244 bytes, over the limit of 243")));
}

TEST(LaunchPlan, RejectsBadInputBeforeWritingAnything) {
  ScratchDir d;
  Plan p;
  PlanRequest r = Request(d.path());
  r.workspace = d.path() / "missing";
  EXPECT_THAT(BuildPlan(r, &p), StatusIs(Errc::kNotFound, HasSubstr("does not exist")));
  r = Request(d.path());
  r.scheduler_args = {"--time=5"};
  EXPECT_THAT(BuildPlan(r, &p), StatusIs(Errc::kInvalid, HasSubstr("local backend takes no scheduler arguments")));
  r = Request(d.path());
  r.backend = "pbs";
  EXPECT_THAT(BuildPlan(r, &p), StatusIs(Errc::kInvalid, HasSubstr("unknown backend 'pbs'")));
  r = Request(d.path());
  r.passthrough = {"steps=ten"};
  EXPECT_THAT(BuildPlan(r, &p), StatusIs(Errc::kInvalid, HasSubstr("steps needs a positive integer")));
  r = Request(d.path());
  r.passthrough = {"_env_A-B=1"};
  EXPECT_THAT(BuildPlan(r, &p), StatusIs(Errc::kInvalid, HasSubstr("_env_KEY=VALUE")));
  r = Request(d.path());
  r.stage_timeouts = {{"train", 0}};
  EXPECT_THAT(BuildPlan(r, &p), StatusIs(Errc::kInvalid, HasSubstr("timeout of 0")));
  r = Request(d.path());
  r.observe = true;
  EXPECT_THAT(BuildPlan(r, &p), StatusIs(Errc::kNotFound, HasSubstr("--observe needs mt-exporter")));
  EXPECT_TRUE(fs::is_empty(d.path()));
}

TEST(LaunchPlan, HashIsStableAndCoversEverything) {
  ScratchDir d;
  Plan a, b, c;
  PlanRequest r = Request(d.path());
  r.passthrough = {"steps=3"};
  ASSERT_THAT(BuildPlan(r, &a), IsOk());
  ASSERT_THAT(BuildPlan(r, &b), IsOk());
  EXPECT_EQ(a.hash, b.hash);
  EXPECT_EQ(a.hash.size(), 64u);
  EXPECT_EQ(a.hash, a.ComputeHash());
  r.passthrough = {"steps=4"};
  ASSERT_THAT(BuildPlan(r, &c), IsOk());
  EXPECT_NE(a.hash, c.hash);
}

TEST(LaunchPlan, EnvPassthroughSetsModelKnobsButNeverWhatLoadsCode) {
  ScratchDir d;
  Plan p;
  for (const char* ok : {"_env_XLA_FLAGS=--xla_gpu_enable_latency_hiding_scheduler=true", "_env_NCCL_DEBUG=INFO",
                         "_env_RCCL_MSCCL_ENABLE=0", "_env_XLA_PYTHON_CLIENT_MEM_FRACTION=.9", "_env_SIM_STEP_SECONDS=1"}) {
    PlanRequest r = Request(d.path());
    r.passthrough = {ok};
    EXPECT_THAT(BuildPlan(r, &p), IsOk()) << ok;
  }
  // The finding: a plan with _env_LD_PRELOAD ran the preloaded library once approved.
  for (const char* bad : {"LD_PRELOAD", "LD_LIBRARY_PATH", "PATH", "PYTHONPATH", "PYTHONSTARTUP", "BASH_ENV",
                          "NCCL_NET_PLUGIN", "CUDA_INJECTION64_PATH", "HSA_TOOLS_LIB", "XLA_PYTHON_CLIENT_PLUGIN_PATH",
                          "GLIBC_TUNABLES", "SLURM_JOB_ID"}) {
    PlanRequest r = Request(d.path());
    r.passthrough = {std::string("_env_") + bad + "=/tmp/evil.so"};
    EXPECT_THAT(BuildPlan(r, &p), StatusIs(Errc::kInvalid, HasSubstr("loader, interpreter, search-path or plugin variable"))) << bad;
  }
  PlanRequest r = Request(d.path());
  r.passthrough = {"_env_FOO=1"};
  EXPECT_THAT(BuildPlan(r, &p), StatusIs(Errc::kInvalid, HasSubstr("_env_FOO is not an allowed model knob")));
}

TEST(LaunchPlan, JsonRoundTripKeepsMetacharactersAndDetectsTampering) {
  ScratchDir d;
  PlanRequest r = Request(d.path());
  const std::vector<std::string> nasty = {"x=$(rm -rf /)", "y=`id`;z", "a b\tc", "q='\"\\", "p=|&><*?~", "_env_XLA_FLAGS=$HOME;ls"};
  r.passthrough = nasty;
  Plan p, back;
  ASSERT_THAT(BuildPlan(r, &p), IsOk());
  ASSERT_THAT(PlanFromJson(nlohmann::json::parse(p.ToJson().dump()), &back), IsOk());
  EXPECT_EQ(back.passthrough, nasty);
  EXPECT_EQ(back.overrides, std::vector<std::string>(nasty.begin(), nasty.end() - 1));
  EXPECT_EQ(back.env.at("XLA_FLAGS"), "$HOME;ls");
  EXPECT_EQ(back.ToJson(), p.ToJson());
  auto j = p.ToJson();
  j["passthrough"][0] = "x=1";
  EXPECT_THAT(PlanFromJson(j, &back), StatusIs(Errc::kInvalid, HasSubstr("does not match its hash")));
  EXPECT_THAT(PlanFromJson(nlohmann::json::object(), &back), StatusIs(Errc::kInvalid, HasSubstr("not an mt plan")));
}

TEST(LaunchShellQuote, RoundTripsThroughARealShell) {
  const std::vector<std::string> args = {"plain", "", "a b", "it's", "$(id)", "`id`", "a;b|c&d", "*?[x]", "\"q\"", "back\\slash", "new\nline"};
  const auto r = RunCapture({"bash", "-c", "for a in " + ShellJoin(args) + "; do printf '<%s>' \"$a\"; done"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want;
  for (const auto& a : args) want += "<" + a + ">";
  EXPECT_EQ(r.out, want);
  EXPECT_EQ(ShellQuote("steps=20"), "steps=20");
}

TEST(LaunchK8sManifest, IsAValidIndexedJob) {
  ScratchDir d;
  PlanRequest r = Request(d.path());
  r.backend = "k8s";
  r.nodes = 3;
  r.model_spec = "deepseek3-671b:ALIAS:tag";
  Plan p;
  ASSERT_THAT(BuildPlan(r, &p), IsOk());
  EXPECT_EQ(p.job_id, "k8s-20260224-190000-a3f1");
  const YAML::Node y = YAML::Load(RenderK8sManifest(p, {}));
  EXPECT_EQ(y["apiVersion"].as<std::string>(), "batch/v1");
  EXPECT_EQ(y["kind"].as<std::string>(), "Job");
  const auto name = y["metadata"]["name"].as<std::string>();
  EXPECT_LE(name.size(), 63u);
  EXPECT_TRUE(std::regex_match(name, std::regex("[a-z0-9]([-a-z0-9]*[a-z0-9])?"))) << name;
  EXPECT_EQ(y["metadata"]["annotations"]["mt/plan-sha256"].as<std::string>(), p.hash);
  EXPECT_EQ(y["spec"]["completionMode"].as<std::string>(), "Indexed");
  EXPECT_EQ(y["spec"]["completions"].as<int>(), 3);
  EXPECT_EQ(y["spec"]["parallelism"].as<int>(), 3);
  const auto pod = y["spec"]["template"]["spec"];
  EXPECT_EQ(pod["restartPolicy"].as<std::string>(), "Never");
  const auto c = pod["containers"][0];
  EXPECT_EQ(c["command"][1].as<std::string>(), "task");
  EXPECT_EQ(c["command"][2].as<std::string>(), (p.artifact_dir / "plan.json").string());
  EXPECT_EQ(c["env"][0]["name"].as<std::string>(), "NODE_RANK");
  EXPECT_THAT(c["env"][0]["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>(), HasSubstr("job-completion-index"));
  EXPECT_EQ(c["resources"]["limits"]["amd.com/gpu"].as<int>(), 8);
  EXPECT_EQ(pod["volumes"][0]["persistentVolumeClaim"]["claimName"].as<std::string>(), "mt-shared");
}

TEST(LaunchSimScenario, TheSimulatorAcceptsIt) {
  ScratchDir d;
  PlanRequest r = Request(d.path());
  r.nodes = 3;
  r.model_spec = "mixtral";
  r.passthrough = {"steps=12", "per_device_batch_size=3"};
  Plan p;
  ASSERT_THAT(BuildPlan(r, &p), IsOk());
  sim::Scenario s;
  std::string err;
  ASSERT_TRUE(sim::ParseScenario(SimScenarioYaml(p), "generated", &s, &err)) << err << "\n" << SimScenarioYaml(p);
  EXPECT_EQ(s.hosts.size(), 3u);
  EXPECT_EQ(s.model, "mixtral-8x22b");
}

TEST(LaunchArtifact, IsReadOnlyAndCompleteOrAbsent) {
  ScratchDir d;
  PlanRequest r = Request(d.path());
  r.repo_dir = MT_SOURCE_DIR;
  Plan p;
  ASSERT_THAT(BuildPlan(r, &p), IsOk());
  ASSERT_THAT(CreateArtifact(p, {"mt", "submit", "llama2-70b", "--", "x=$(id)"}, {{"scenario.yaml", "a: 1\n"}}), IsOk());
  const fs::path a = p.artifact_dir;
  for (const char* f : {"plan.json", "submit_cmd.txt", "git_summary.txt", "scenario.yaml", "configs/models/llama2-70b.yml"}) {
    struct stat st {};
    ASSERT_EQ(stat((a / f).c_str(), &st), 0) << f;
    EXPECT_EQ(st.st_mode & 0777, 0444u) << f;
  }
  EXPECT_THAT(test::ReadAll(a / "submit_cmd.txt"), HasSubstr("mt submit llama2-70b -- 'x=$(id)'"));
  EXPECT_THAT(test::ReadAll(a / "git_summary.txt"), HasSubstr("[BRANCH]"));
  Plan back;
  EXPECT_THAT(PlanFromJson(nlohmann::json::parse(test::ReadAll(a / "plan.json")), &back), IsOk());
  // A second artifact with the same name fails and leaves no temp dir behind.
  EXPECT_THAT(CreateArtifact(p, {"mt"}, {}), StatusIs(Errc::kConflict, HasSubstr("already exists")));
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(a.parent_path())) n += e.path() != a;
  EXPECT_EQ(n, 0u);
  RemoveTree(a);
  EXPECT_FALSE(fs::exists(a));
}

}  // namespace
}  // namespace mt::launch

namespace mt::launch {
namespace {

TEST(SlurmTime, LocalTimesWithoutAZoneAndWhatIsNotATime) {
  std::tm tm{};
  ASSERT_NE(strptime("2026-01-02T03:04:05", "%Y-%m-%dT%H:%M:%S", &tm), nullptr);
  tm.tm_isdst = -1;
  EXPECT_EQ(SlurmTime("2026-01-02T03:04:05"), static_cast<double>(std::mktime(&tm)));   // this machine's zone
  EXPECT_EQ(SlurmTime("Unknown"), std::nullopt);
  EXPECT_EQ(SlurmTime("None"), std::nullopt);
  EXPECT_EQ(SlurmTime(""), std::nullopt);
  EXPECT_EQ(SlurmTime("2026-01-02T03:04:05Z"), std::nullopt);   // not Slurm's form
  EXPECT_EQ(SlurmTime("2999-01-01T00:00:00"), std::nullopt);    // a pending job's estimate lies ahead
}

}  // namespace
}  // namespace mt::launch
