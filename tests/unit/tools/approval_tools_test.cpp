// submit_job / cancel_job through the real MCP dispatcher, in both protocol eras, against
// the real approvals store, audit log and local launcher backend (mt-job runs the jobs).
// Every attack from the issue is tried here and must fail with its refusal audited.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <thread>
#include <unistd.h>

#include "launcher/approval/audit.h"
#include "launcher/launch/submit.h"
#include "mcp/server.h"
#include "mcp/session.h"
#include "test_util.h"
#include "tools/gate/approval_gate.h"
#include "tools/catalog/cancel_job_tool.h"
#include "tools/catalog/config.h"
#include "tools/catalog/run_sweep_tool.h"
#include "tools/catalog/submit_job_tool.h"

namespace mt::tools {
namespace {

namespace fs = std::filesystem;
namespace approval = launch::approval;
using ::testing::HasSubstr;

class CaptureChannel : public mcp::Channel {
 public:
  bool CanSend() const override { return true; }
  bool Send(const Json& m) override {
    std::lock_guard lock(mu);
    sent.push_back(m);
    return true;
  }
  std::vector<Json> Sent() {
    std::lock_guard lock(mu);
    return sent;
  }
  std::mutex mu;
  std::vector<Json> sent;
};

Json ModernMeta(Json caps) {
  if (caps.is_null()) caps = Json::object();
  return {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"}, {"io.modelcontextprotocol/clientCapabilities", caps}};
}

Json With(Json a, const Json& patch) {
  a.merge_patch(patch);
  return a;
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ApprovalTools : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("MT_JOB_BIN", MT_JOB_BIN, 1);
    ws_ = dir_.path() / "outputs";
    models_ = dir_.path() / "models";
    fs::create_directories(ws_);
    testing::WriteFile(models_ / "echo-args.yml",
                       "description: prints each passthrough arg\nsteps: 1\ntrain_command: [\"/usr/bin/printf\", \"ARG<%s>\\n\", \"{PASSTHROUGH}\"]\n");
    testing::WriteFile(models_ / "sleeper.yml", "description: sleeps\nsteps: 1\ntrain_command: [\"/bin/sleep\", \"{PASSTHROUGH}\"]\n");
    testing::WriteFile(models_ / "llama2-70b.yml", "description: d\nsteps: 50\ngpus_per_node: 8\ntrain_command: [\"/bin/true\"]\n");
    Rebuild();
  }
  void TearDown() override {
    // Stop any job still running (the sleeper), by its recorded process group.
    for (const auto& e : fs::directory_iterator(ws_)) {
      if (!e.is_directory() || e.path().filename().string().rfind("local_", 0) != 0) continue;
      std::string msg;
      (void)launch::CancelJob(ws_, e.path().filename().string(), &msg);
    }
  }
  void Rebuild(const std::string& policy_yaml = "ci: {backends: [local], max_nodes: 2, max_steps: 5, cancel: true}") {
    ProductOptions o{ws_};
    o.in_band_approval = in_band_;
    o.approval_page_url = "http://127.0.0.1:8765/approvals";
    o.approval_url_wait = std::chrono::milliseconds(1500);
    o.approvals.max_pending_per_requester = max_pending_;
    o.approvals.workspace = ws_;
    o.approvals.approvals_dir = ws_ / ".mt" / "approvals";
    o.approvals.audit_log = audit_path_;
    o.approvals.models_dir = models_;
    o.approvals.policy = approval::PolicyFromYaml(YAML::Load(policy_yaml));
    env_ = GateOptionsFrom(o).env;
    registry_ = std::make_shared<mcp::Registry>();
    RegisterSubmitJob(*registry_, o);
    RegisterCancelJob(*registry_, o);
    RegisterRunSweep(*registry_, o);
    server_ = std::make_unique<mcp::Server>(mcp::ServerInfo{}, registry_);
  }

  Json Modern(const Json& params, Json caps = Json::object(), const std::string& who = "agent-1",
              const std::string& role = "agent", const std::string& method = "tools/call") {
    Json p = params;
    p["_meta"] = ModernMeta(caps);
    mcp::RequestEnv env;
    env.principal = mcp::Principal{who, role, true};
    auto r = server_->Handle({{"jsonrpc", "2.0"}, {"id", ++id_}, {"method", method}, {"params", p}}, env);
    return r ? *r : Json();
  }
  // Form mode: the client's answer decides (approvals.in_band: form, trusted configs only).
  void UseFormMode() {
    in_band_ = InBandApproval::kForm;
    Rebuild();
  }
  InBandApproval in_band_ = InBandApproval::kUrl;   // the shipped default
  std::size_t max_pending_ = 20;

  // A legacy session whose client answers every elicitation with `answer(params)`.
  Json Legacy(const Json& params, std::function<Json(const Json&)> answer, int* asked = nullptr,
              Json elicitation_caps = Json::object()) {
    mcp::LegacySession session("s" + std::to_string(id_));
    CaptureChannel channel;
    mcp::RequestEnv env;
    env.session = &session;
    env.in_flight = &session.in_flight();
    env.channel = &channel;
    env.principal = mcp::Principal{"agent-1", "agent", true};
    server_->Handle({{"jsonrpc", "2.0"}, {"id", ++id_}, {"method", "initialize"},
                     {"params", {{"protocolVersion", "2025-11-25"}, {"capabilities", {{"elicitation", elicitation_caps}}},
                                 {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}},
                    env);
    std::atomic<bool> done{false};
    std::thread client([&] {
      size_t seen = 0;
      while (!done) {
        auto sent = channel.Sent();
        for (; seen < sent.size(); ++seen) {
          if (sent[seen].value("method", "") != "elicitation/create") continue;
          if (asked) ++*asked;
          session.Deliver(sent[seen]["id"], answer(sent[seen]["params"]), nullptr);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
    auto r = server_->Handle({{"jsonrpc", "2.0"}, {"id", ++id_}, {"method", "tools/call"}, {"params", params}}, env);
    done = true;
    client.join();
    return r ? *r : Json();
  }
  static Json Submit(Json args) { return {{"name", "submit_job"}, {"arguments", std::move(args)}}; }
  Json EchoArgs(std::vector<std::string> pass = {"hello"}) {
    return {{"model", "echo-args"}, {"backend", "local"}, {"passthrough", pass}};
  }

  std::vector<Json> Audit() {
    std::vector<Json> out;
    std::ifstream in(audit_path_);
    for (std::string l; std::getline(in, l);) out.push_back(Json::parse(l));
    return out;
  }
  // The audit lines with event `event` (and reason containing `reason`).
  int Audited(const std::string& event, const std::string& reason = "") {
    int n = 0;
    for (const auto& a : Audit())
      if (a.value("event", "") == event && a.value("reason", "").find(reason) != std::string::npos) ++n;
    return n;
  }
  int JobDirs() {
    int n = 0;
    for (const auto& e : fs::directory_iterator(ws_)) n += e.is_directory() && e.path().filename().string()[0] != '.';
    return n;
  }
  // Waits (bounded) for a local job's log to hold `text`.
  bool LogHas(const std::string& job_id, const std::string& text) {
    for (int i = 0; i < 400; ++i) {
      for (const auto& e : fs::directory_iterator(ws_))
        if (e.path().filename().string().rfind(job_id, 0) == 0 && e.path().extension() == ".log" &&
            ReadAll(e.path()).find(text) != std::string::npos)
          return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return false;
  }
  approval::PlanRecord Record(const std::string& id) {
    approval::PlanRecord r;
    EXPECT_TRUE(env_.Store().Get(id, approval::UnixNow(), &r).ok());
    return r;
  }

  testing::TempDir dir_;
  fs::path ws_, models_, audit_path_ = dir_.path() / "audit" / "audit.jsonl";
  ApprovalEnv env_;
  std::shared_ptr<mcp::Registry> registry_;
  std::unique_ptr<mcp::Server> server_;
  int id_ = 0;
};

const Actor kAlice{"user:alice@host", "approver"};

TEST_F(ApprovalTools, WithoutElicitationThePlanWaitsForAHumanThenRuns) {
  Json r = Modern(Submit(EchoArgs()));
  const Json& s = r["result"]["structuredContent"];
  ASSERT_EQ(s["status"], "pending_approval") << r.dump();
  const std::string id = s["plan_id"];
  EXPECT_THAT(s["message"].get<std::string>(), HasSubstr("mt approve " + id));
  EXPECT_EQ(s["plan"]["backend"], "local");
  EXPECT_EQ(JobDirs(), 0);   // nothing ran
  EXPECT_EQ(Audited("requested"), 1);
  // A lookup by plan_id reports the state and decides nothing.
  EXPECT_EQ(Modern(Submit({{"plan_id", id}}))["result"]["structuredContent"]["status"], "pending_approval");
  approval::PlanRecord rec;
  ASSERT_EQ(Decide(env_, id, s["plan_hash"], true, kAlice, "terminal", "", &rec), "");
  EXPECT_EQ(rec.state, "submitted");
  EXPECT_TRUE(LogHas(rec.job_id, "ARG<hello>"));
  Json later = Modern(Submit({{"plan_id", id}}))["result"]["structuredContent"];
  EXPECT_EQ(later["status"], "submitted");
  EXPECT_EQ(later["job_id"], rec.job_id);
  EXPECT_EQ(later["approver"], kAlice.name);
  EXPECT_EQ(Audited("approved"), 1);
  EXPECT_EQ(Audited("submitted"), 1);
}

TEST_F(ApprovalTools, LegacyElicitationAcceptSubmits) {
  UseFormMode();
  int asked = 0;
  Json r = Legacy(Submit(EchoArgs({"legacy"})),
                  [](const Json& p) {
                    EXPECT_THAT(p["message"].get<std::string>(), HasSubstr("echo-args"));
                    return Json{{"action", "accept"},
                                {"content", {{"decision", "approve"}, {"plan", p["requestedSchema"]["properties"]["plan"]["default"]}}}};
                  },
                  &asked);
  const Json& s = r["result"]["structuredContent"];
  ASSERT_EQ(s["status"], "submitted") << r.dump();
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(s["via"], "elicitation");
  EXPECT_TRUE(LogHas(s["job_id"], "ARG<legacy>"));
}

TEST_F(ApprovalTools, DeclineLeavesItPendingForAHuman) {
  UseFormMode();
  Json r = Legacy(Submit(EchoArgs()), [](const Json&) { return Json{{"action", "decline"}}; });
  EXPECT_EQ(r["result"]["structuredContent"]["status"], "pending_approval") << r.dump();
  EXPECT_EQ(Audited("elicitation_declined"), 1);
  EXPECT_EQ(JobDirs(), 0);
}

TEST_F(ApprovalTools, ModernInputRequiredSubmitsOnceAndStatesCannotBeReplayedOrTampered) {
  UseFormMode();
  Json caps = {{"elicitation", Json::object()}};
  Json r1 = Modern(Submit(EchoArgs({"modern"})), caps);
  ASSERT_EQ(r1["result"]["resultType"], "input_required") << r1.dump();
  const Json ask = r1["result"]["inputRequests"]["approve_plan"];
  EXPECT_EQ(ask["method"], "elicitation/create");
  const std::string id = ask["params"]["requestedSchema"]["properties"]["plan"]["default"];
  const std::string state = r1["result"]["requestState"];
  Json yes = {{"approve_plan", {{"action", "accept"}, {"content", {{"decision", "approve"}, {"plan", id}}}}}};

  // Tampered state, or the state with changed arguments (more nodes): refused.
  Json bad = Submit(EchoArgs({"modern"}));
  bad["requestState"] = state.substr(0, state.size() - 2) + (state.back() == 'A' ? "BB" : "AA");
  bad["inputResponses"] = yes;
  EXPECT_EQ(Modern(bad, caps)["error"]["code"], mcp::kInvalidParams);
  Json changed = Submit(With(EchoArgs({"modern"}), {{"nodes", 2}}));
  changed["requestState"] = state;
  changed["inputResponses"] = yes;
  EXPECT_EQ(Modern(changed, caps)["error"]["code"], mcp::kInvalidParams);
  EXPECT_EQ(Record(id).state, "pending");

  Json good = Submit(EchoArgs({"modern"}));
  good["requestState"] = state;
  good["inputResponses"] = yes;
  Json r2 = Modern(good, caps);
  const Json& s = r2["result"]["structuredContent"];
  ASSERT_EQ(s["status"], "submitted") << r2.dump();
  EXPECT_EQ(s["via"], "input_required");
  EXPECT_TRUE(LogHas(s["job_id"], "ARG<modern>"));
  // Replaying the used state: refused by the dispatcher, and the plan is spent anyway.
  EXPECT_EQ(Modern(good, caps)["error"]["code"], mcp::kInvalidParams);
  EXPECT_EQ(JobDirs(), 1);
}

TEST_F(ApprovalTools, AReplayedStateAfterARestartMeetsASpentPlan) {
  // With a persistent key (approvals.state_key_file) the state survives a restart; the
  // store still makes the approval single-use.
  UseFormMode();
  mcp::ServerOptions so;
  so.request_state_key = std::string(32, 'k');
  server_ = std::make_unique<mcp::Server>(mcp::ServerInfo{}, registry_, so);
  Json caps = {{"elicitation", Json::object()}};
  Json r1 = Modern(Submit(EchoArgs()), caps);
  const std::string id = r1["result"]["inputRequests"]["approve_plan"]["params"]["requestedSchema"]["properties"]["plan"]["default"];
  Json good = Submit(EchoArgs());
  good["requestState"] = r1["result"]["requestState"];
  good["inputResponses"] = {{"approve_plan", {{"action", "accept"}, {"content", {{"decision", "approve"}, {"plan", id}}}}}};
  ASSERT_EQ(Modern(good, caps)["result"]["structuredContent"]["status"], "submitted");
  server_ = std::make_unique<mcp::Server>(mcp::ServerInfo{}, registry_, so);   // "restart"
  Json again = Modern(good, caps);
  EXPECT_TRUE(again["result"].value("isError", false)) << again.dump();
  EXPECT_THAT(again["result"]["content"][0]["text"].get<std::string>(), HasSubstr("submitted, not pending"));
  EXPECT_GE(Audited("refused", "not pending"), 1);
  EXPECT_EQ(JobDirs(), 1);
}

TEST_F(ApprovalTools, AnElicitationAnswerForAnotherPlanIsRefused) {
  UseFormMode();
  Json other = Modern(Submit(EchoArgs({"other"})))["result"]["structuredContent"];
  Json r = Legacy(Submit(EchoArgs()), [&](const Json&) {
    return Json{{"action", "accept"}, {"content", {{"decision", "approve"}, {"plan", other["plan_id"]}}}};
  });
  EXPECT_TRUE(r["result"].value("isError", false)) << r.dump();
  EXPECT_EQ(Audited("refused", "answer names plan"), 1);
  EXPECT_EQ(Record(other["plan_id"]).state, "pending");
  EXPECT_EQ(JobDirs(), 0);
}

TEST_F(ApprovalTools, NothingAnAgentSendsApproves) {
  Json s = Modern(Submit(EchoArgs()))["result"]["structuredContent"];
  const std::string id = s["plan_id"], hash = s["plan_hash"];
  // No tool approves: the catalogue has only the two gated tools and run_sweep (the CI
  // policy's, role ci only), none takes an approval, and extra arguments ("approved": true)
  // are schema errors.
  mcp::RequestEnv env;
  auto list = server_->Handle({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}, {"params", {{"_meta", ModernMeta({})}}}}, env);
  ASSERT_TRUE(list);
  std::vector<std::string> names;
  for (const auto& t : (*list)["result"]["tools"]) {
    names.push_back(t["name"]);
    for (const auto& [field, schema] : t["inputSchema"]["properties"].items())
      EXPECT_EQ(field.find("approv"), std::string::npos) << t["name"] << " takes " << field;
  }
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("submit_job", "cancel_job", "run_sweep"));
  Json sneaky = Modern(Submit({{"plan_id", id}, {"approved", true}}));
  EXPECT_TRUE(sneaky["result"].value("isError", false));
  // The gate itself refuses an agent's (or CI's) decision, whatever channel carries it.
  approval::PlanRecord rec;
  EXPECT_THAT(Decide(env_, id, hash, true, Actor{"agent-1", "agent"}, "web", "", &rec), HasSubstr("approver role needed"));
  EXPECT_THAT(Decide(env_, id, hash, true, Actor{"ci-bot", "ci"}, "terminal", "", &rec), HasSubstr("approver role needed"));
  EXPECT_EQ(Audited("refused", "approver role needed"), 2);
  EXPECT_EQ(Record(id).state, "pending");
}

TEST_F(ApprovalTools, AChangedPlanNeedsANewApproval) {
  Json s = Modern(Submit(EchoArgs()))["result"]["structuredContent"];
  const std::string id = s["plan_id"], hash = s["plan_hash"];
  // plan_id with different arguments (more nodes, other passthrough): refused, audited.
  for (Json changed : {Json{{"nodes", 4}}, Json{{"passthrough", {"rm -rf"}}}}) {
    Json args = With(EchoArgs(), changed);
    args["plan_id"] = id;
    Json r = Modern(Submit(args));
    EXPECT_TRUE(r["result"].value("isError", false)) << r.dump();
  }
  EXPECT_EQ(Audited("refused", "differ from the plan"), 2);
  // The stored plan edited after it was shown (nodes 1 → 8, a nodelist): the approval of the
  // shown hash does not carry over; nothing is submitted.
  const fs::path file = env_.approvals_dir / (id + ".json");
  Json j = Json::parse(ReadAll(file));
  j["plan"]["nodes"] = 8;
  j["plan"]["scheduler_args"] = {"--nodelist=n[1-8]"};
  std::ofstream(file) << j.dump();
  approval::PlanRecord rec;
  EXPECT_THAT(Decide(env_, id, hash, true, kAlice, "terminal", "", &rec), HasSubstr("does not match its hash"));
  EXPECT_EQ(rec.state, "failed");
  EXPECT_EQ(JobDirs(), 0);
  EXPECT_EQ(Audited("failed"), 1);
}

TEST_F(ApprovalTools, ExpiredAndForgedPlansAreRefused) {
  approval::PlanRecord old;
  old.kind = "submit";
  old.hash = std::string(64, 'a');
  old.plan = Json::object();
  old.requester = "agent-1";
  old.requester_role = "agent";
  ASSERT_TRUE(env_.Store().Create(&old, approval::UnixNow() - 16 * 60).ok());
  approval::PlanRecord rec;
  EXPECT_THAT(Decide(env_, old.id, old.hash, true, kAlice, "terminal", "", &rec), HasSubstr("expired, not pending"));
  EXPECT_EQ(Modern(Submit({{"plan_id", old.id}}))["result"]["structuredContent"]["status"], "expired");
  for (const std::string& forged : std::vector<std::string>{"../../../etc/passwd", std::string(32, 'f'), "0"}) {
    Json r = Modern(Submit({{"plan_id", forged}}));
    EXPECT_TRUE(r["result"].value("isError", false)) << forged;
    EXPECT_THAT(Decide(env_, forged, old.hash, true, kAlice, "terminal", "", &rec), HasSubstr("no such plan"));
  }
  EXPECT_EQ(Audited("refused", "expired"), 1);
  EXPECT_GE(Audited("refused", "not a plan id"), 2);
  EXPECT_FALSE(fs::exists(env_.approvals_dir / "etc"));
}

TEST_F(ApprovalTools, CiRunsWithinItsPolicyAndIsRefusedBeyondIt) {
  Json ok = Modern(Submit(With(EchoArgs({"steps=5"}), {{"nodes", 2}})), {}, "ci-bot", "ci");
  const Json& s = ok["result"]["structuredContent"];
  ASSERT_EQ(s["status"], "submitted") << ok.dump();
  EXPECT_EQ(s["via"], "policy");
  EXPECT_EQ(s["approver"], "policy.ci");
  Json big = Modern(Submit(With(EchoArgs({"steps=500"}), {{"nodes", 3}})), {}, "ci-bot", "ci");
  const Json& d = big["result"]["structuredContent"];
  ASSERT_EQ(d["status"], "denied") << big.dump();
  EXPECT_THAT(d["message"].get<std::string>(), HasSubstr("3 nodes exceeds max_nodes 2"));
  EXPECT_THAT(d["message"].get<std::string>(), HasSubstr("steps=500 exceeds max_steps 5"));
  int denied = 0;
  for (const auto& a : Audit()) denied += a["event"] == "denied" && a["actor"] == "policy.ci";
  EXPECT_EQ(denied, 1);
  EXPECT_EQ(JobDirs(), 1);
  // An agent's identical request is not policy-approved: the policy is keyed on the role.
  EXPECT_EQ(Modern(Submit(EchoArgs({"steps=5"})))["result"]["structuredContent"]["status"], "pending_approval");
}

TEST_F(ApprovalTools, PathTricksStayInTheWorkspace) {
  for (const std::string& model : std::vector<std::string>{"../../etc/passwd", "/etc/passwd", "echo-args/../../x"}) {
    Json r = Modern(Submit({{"model", model}, {"backend", "local"}}));
    EXPECT_TRUE(r["result"].value("isError", false)) << model << r.dump();
  }
  EXPECT_EQ(Audited("refused"), 3);
  Json s = Modern(Submit(EchoArgs({"../../../../tmp/evil", "x=/../../y"})))["result"]["structuredContent"];
  approval::PlanRecord rec;
  ASSERT_EQ(Decide(env_, s["plan_id"], s["plan_hash"], true, kAlice, "terminal", "", &rec), "");
  EXPECT_TRUE(LogHas(rec.job_id, "ARG<../../../../tmp/evil>"));   // data reaches argv unchanged
  for (const auto& e : fs::directory_iterator(ws_))
    EXPECT_EQ(e.path().parent_path(), ws_);
  const std::string job_dir = Record(s["plan_id"]).plan["paths"]["job_dir"];
  EXPECT_EQ(fs::path(job_dir).parent_path(), ws_);
  EXPECT_FALSE(fs::exists("/tmp/evil"));
}

TEST_F(ApprovalTools, ConcurrentApprovalsSubmitExactlyOnce) {
  Json s = Modern(Submit(EchoArgs({"once"})))["result"]["structuredContent"];
  std::atomic<int> ok{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < 6; ++i)
    ts.emplace_back([&, i] {
      approval::PlanRecord rec;
      if (Decide(env_, s["plan_id"], s["plan_hash"], true, Actor{"approver" + std::to_string(i), "approver"}, "web", "", &rec)
              .empty())
        ++ok;
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(ok, 1);
  EXPECT_EQ(JobDirs(), 1);
  EXPECT_EQ(Audited("submitted"), 1);
  EXPECT_EQ(Audited("refused", "not pending"), 5);
}

TEST_F(ApprovalTools, AnUnwritableAuditLogSubmitsNothing) {
  fs::create_directories(audit_path_);   // a directory where the log file should be
  Json r = Modern(Submit(EchoArgs()));
  EXPECT_TRUE(r["result"].value("isError", false)) << r.dump();
  EXPECT_THAT(r["result"]["content"][0]["text"].get<std::string>(), HasSubstr("audit log unwritable"));
  // The CI path too: the policy would allow it, the log cannot record it, nothing runs.
  Json c = Modern(Submit(EchoArgs({"steps=1"})), {}, "ci-bot", "ci");
  EXPECT_TRUE(c["result"].value("isError", false)) << c.dump();
  EXPECT_EQ(JobDirs(), 0);
}

// mt serve blocks SIGTERM in every thread (it sigwait()s for it); a mask survives fork and
// exec, so a local job started from such a thread must still be started with it unblocked, or
// its cancel is never seen.
TEST_F(ApprovalTools, ALocalJobStartedFromAThreadThatBlocksSignalsObeysItsCancel) {
  Json s = Modern(Submit({{"model", "sleeper"}, {"backend", "local"}, {"passthrough", {"60"}}}))["result"]["structuredContent"];
  approval::PlanRecord rec;
  std::string err = "not run";
  std::thread([&] {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    err = Decide(env_, s["plan_id"], s["plan_hash"], true, kAlice, "terminal", "", &rec);
  }).join();
  ASSERT_EQ(err, "");
  Json st;
  for (int i = 0; i < 800 && ((void)launch::JobStatus(ws_, rec.job_id, &st), st["state"] != "RUNNING"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_EQ(st["state"], "RUNNING");
  std::string msg;
  ASSERT_TRUE(launch::CancelJob(ws_, rec.job_id, &msg).ok()) << msg;
  for (int i = 0; i < 800 && ((void)launch::JobStatus(ws_, rec.job_id, &st), st["state"] == "RUNNING"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  EXPECT_NE(st["state"], "RUNNING") << st.dump();
}

TEST_F(ApprovalTools, CancelNeedsAJobOfThisWorkspaceAndAnApproval) {
  Json r = Modern({{"name", "cancel_job"}, {"arguments", {{"job", "12345"}}}});
  EXPECT_TRUE(r["result"].value("isError", false));
  EXPECT_TRUE(Modern({{"name", "cancel_job"}, {"arguments", {{"job", "../outside"}}}})["result"].value("isError", false));
  EXPECT_EQ(Audited("refused"), 2);
  // A running job (approved by a human), then its cancellation (approved by a human).
  Json s = Modern(Submit({{"model", "sleeper"}, {"backend", "local"}, {"passthrough", {"60"}}}))["result"]["structuredContent"];
  approval::PlanRecord rec;
  ASSERT_EQ(Decide(env_, s["plan_id"], s["plan_hash"], true, kAlice, "terminal", "", &rec), "");
  const std::string job = rec.job_id;
  Json st;
  // Up to 20 s: on a loaded machine (ctest -j2 beside a build) the local job took over 5 s to start.
  for (int i = 0; i < 800 && ((void)launch::JobStatus(ws_, job, &st), st["state"] != "RUNNING"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_EQ(st["state"], "RUNNING");
  Json c = Modern({{"name", "cancel_job"}, {"arguments", {{"job", job}}}})["result"]["structuredContent"];
  ASSERT_EQ(c["status"], "pending_approval") << c.dump();
  EXPECT_EQ(c["plan"]["job"], job);
  ASSERT_TRUE(launch::JobStatus(ws_, job, &st).ok());
  EXPECT_EQ(st["state"], "RUNNING");   // nothing happened before the approval
  ASSERT_EQ(Decide(env_, c["plan_id"], c["plan_hash"], true, kAlice, "terminal", "", &rec), "");
  EXPECT_EQ(rec.state, "submitted");
  for (int i = 0; i < 800 && ((void)launch::JobStatus(ws_, job, &st), st["state"] == "RUNNING"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  EXPECT_NE(st["state"], "RUNNING");
  EXPECT_EQ(Audited("cancelled"), 1);
  // CI may cancel only when its rule says so (it does here).
  Json c2 = Modern({{"name", "cancel_job"}, {"arguments", {{"job", job}}}}, {}, "ci-bot", "ci")["result"];
  EXPECT_EQ(c2["structuredContent"].value("via", ""), "policy") << c2.dump();
}

TEST_F(ApprovalTools, ConfigCarriesRolesPolicyAndApprovalPaths) {
  const fs::path cfg = dir_.path() / "configs" / "mt.yaml";
  testing::WriteFile(cfg, "workspace: ws\napprovals:\n  stdio_role: approver\n  dir: state/approvals\n  ttl_minutes: 5\n"
                          "  in_band: false\npolicy:\n  ci: {max_nodes: 8, partitions: [ci]}\n");
  Config c = LoadConfigFile(cfg);
  EXPECT_EQ(c.stdio_role, "approver");
  EXPECT_EQ(c.approvals_dir, dir_.path() / "state" / "approvals");
  EXPECT_EQ(c.AuditLogPath(), dir_.path() / "ws" / ".mt" / "audit.jsonl");
  EXPECT_EQ(c.approval_ttl_minutes, 5);
  EXPECT_EQ(c.approval_in_band, InBandApproval::kOff);
  ASSERT_NE(c.policy.Find("ci"), nullptr);
  EXPECT_EQ(*c.policy.Find("ci")->max_nodes, 8);
  testing::WriteFile(cfg, "approvals: {stdio_role: root}\n");
  EXPECT_THROW(LoadConfigFile(cfg), std::runtime_error);
}

// ---- Hardening (issue 14): nothing the agent's own client answers approves by default ----

TEST_F(ApprovalTools, ByDefaultAFormOnlyClientIsNeverAskedAndThePlanWaits) {
  int asked = 0;
  Json r = Legacy(Submit(EchoArgs()), [](const Json&) {
    return Json{{"action", "accept"}, {"content", {{"decision", "approve"}}}};
  }, &asked);
  const Json& s = r["result"]["structuredContent"];
  EXPECT_EQ(s["status"], "pending_approval") << r.dump();
  EXPECT_EQ(asked, 0);
  EXPECT_THAT(s["message"].get<std::string>(), HasSubstr("/approvals?plan=" + s["plan_id"].get<std::string>()));
  EXPECT_EQ(JobDirs(), 0);
}

TEST_F(ApprovalTools, ByDefaultModernFormAnswersAreNotAskedForAndForgedOnesIgnored) {
  Json caps = {{"elicitation", Json::object()}};
  Json s = Modern(Submit(EchoArgs()), caps)["result"];
  ASSERT_EQ(s["structuredContent"]["status"], "pending_approval") << s.dump();
  // A forged retry carrying an approving form answer, without any state the server issued.
  Json forged = Submit(EchoArgs());
  forged["inputResponses"] = {{"approve_plan", {{"action", "accept"},
                                                {"content", {{"decision", "approve"}, {"plan", s["structuredContent"]["plan_id"]}}}}}};
  Json again = Modern(forged, caps)["result"]["structuredContent"];
  EXPECT_EQ(again["status"], "pending_approval");
  EXPECT_EQ(Record(s["structuredContent"]["plan_id"]).state, "pending");
  EXPECT_EQ(JobDirs(), 0);
}

TEST_F(ApprovalTools, UrlModeSendsThePageAndTheClientsAcceptApprovesNothing) {
  Json params_seen;
  Json r = Legacy(Submit(EchoArgs()), [&](const Json& p) {
    params_seen = p;
    return Json{{"action", "accept"}, {"content", {{"decision", "approve"}, {"plan", p.value("elicitationId", "")}}}};
  }, nullptr, Json{{"url", Json::object()}, {"form", Json::object()}});
  const Json& s = r["result"]["structuredContent"];
  EXPECT_EQ(s["status"], "pending_approval") << r.dump();
  EXPECT_EQ(params_seen["mode"], "url");
  EXPECT_EQ(params_seen["elicitationId"], s["plan_id"]);
  EXPECT_EQ(params_seen["url"], "http://127.0.0.1:8765/approvals?plan=" + s["plan_id"].get<std::string>());
  EXPECT_FALSE(params_seen.contains("requestedSchema"));
  EXPECT_EQ(Audited("url_elicitation_accept"), 1);
  EXPECT_EQ(Record(s["plan_id"]).state, "pending");
  EXPECT_EQ(JobDirs(), 0);
}

TEST_F(ApprovalTools, UrlModeReturnsTheDecisionTheHumanMadeOnThePage) {
  Json r = Legacy(Submit(EchoArgs({"viapage"})), [&](const Json& p) {
    // The human, on the page, as an authenticated approver.
    EXPECT_EQ(Record(p["elicitationId"]).state, "pending");
    const std::string id = p["elicitationId"];
    std::thread([this, id] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      approval::PlanRecord rec;
      Decide(env_, id, Record(id).hash, true, kAlice, "web", "", &rec);
    }).detach();
    return Json{{"action", "accept"}};
  }, nullptr, Json{{"url", Json::object()}});
  const Json& s = r["result"]["structuredContent"];
  ASSERT_EQ(s["status"], "submitted") << r.dump();
  EXPECT_EQ(s["approver"], kAlice.name);
  EXPECT_EQ(s["via"], "web");
  EXPECT_TRUE(LogHas(s["job_id"], "ARG<viapage>"));
}

TEST_F(ApprovalTools, ModernUrlModeRetriesCannotApproveEither) {
  Json caps = {{"elicitation", {{"url", Json::object()}}}};
  Json r1 = Modern(Submit(EchoArgs()), caps)["result"];
  ASSERT_EQ(r1["resultType"], "input_required") << r1.dump();
  const Json ask = r1["inputRequests"]["approve_plan_url"];
  EXPECT_EQ(ask["params"]["mode"], "url");
  EXPECT_FALSE(ask["params"].contains("elicitationId"));   // removed in 2026-07-28
  const std::string url = ask["params"]["url"];
  const std::string id = url.substr(url.find("plan=") + 5);
  Json retry = Submit(EchoArgs());
  retry["requestState"] = r1["requestState"];
  retry["inputResponses"] = {{"approve_plan_url", {{"action", "accept"}, {"content", {{"decision", "approve"}}}}},
                             {"approve_plan", {{"action", "accept"}, {"content", {{"decision", "approve"}, {"plan", id}}}}}};
  Json r2 = Modern(retry, caps)["result"]["structuredContent"];
  EXPECT_EQ(r2["status"], "pending_approval") << r2.dump();
  EXPECT_EQ(Record(id).state, "pending");
  EXPECT_EQ(JobDirs(), 0);
}

TEST_F(ApprovalTools, PendingPlansPerRequesterAreCapped) {
  max_pending_ = 3;
  Rebuild();
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(Modern(Submit(EchoArgs({"n" + std::to_string(i)})))["result"]["structuredContent"]["status"], "pending_approval");
  Json fourth = Modern(Submit(EchoArgs({"n3"})))["result"];
  EXPECT_TRUE(fourth.value("isError", false)) << fourth.dump();
  EXPECT_THAT(fourth["content"][0]["text"].get<std::string>(), HasSubstr("already has 3 plans waiting"));
  EXPECT_EQ(Audited("refused", "already has 3 plans"), 1);
  // Another requester is not affected.
  EXPECT_EQ(Modern(Submit(EchoArgs()), Json::object(), "agent-2")["result"]["structuredContent"]["status"], "pending_approval");
}

TEST_F(ApprovalTools, InBandModesParseAndPrivilegedSettingsNeedAnOperatorFile) {
  const fs::path dir = dir_.path() / "etc";
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                           fs::perms::others_exec);
  const fs::path cfg = dir / "mt.yaml";
  for (auto [text, mode] : std::vector<std::pair<std::string, InBandApproval>>{
           {"url", InBandApproval::kUrl}, {"true", InBandApproval::kUrl}, {"form", InBandApproval::kForm},
           {"off", InBandApproval::kOff}, {"false", InBandApproval::kOff}}) {
    testing::WriteFile(cfg, "approvals: {in_band: " + text + "}\n");
    EXPECT_EQ(LoadConfigFile(cfg).approval_in_band, mode) << text;
  }
  testing::WriteFile(cfg, "approvals: {in_band: maybe}\n");
  EXPECT_THROW(LoadConfigFile(cfg), std::runtime_error);

  // Nothing privileged: any file will do.
  testing::WriteFile(cfg, "approvals: {stdio_role: agent, in_band: url}\n");
  fs::permissions(cfg, fs::perms::all);
  EXPECT_EQ(CheckPrivilegedSettings(LoadConfigFile(cfg)), "");
  // A world-writable file granting the ci role: refused, naming the file, setting and mode.
  testing::WriteFile(cfg, "approvals: {stdio_role: ci, in_band: form}\n");
  fs::permissions(cfg, fs::perms::all);
  std::string why = CheckPrivilegedSettings(LoadConfigFile(cfg));
  EXPECT_THAT(why, HasSubstr(cfg.string()));
  EXPECT_THAT(why, HasSubstr("approvals.stdio_role: ci"));
  EXPECT_THAT(why, HasSubstr("approvals.in_band: form"));
  EXPECT_THAT(why, HasSubstr("mode 0777"));
  // Mode 0644 in a 0755 directory: fine for root (the operator); for any other user the
  // file is its own, so it could have been written by an agent running as that user.
  fs::permissions(cfg, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  why = CheckPrivilegedSettings(LoadConfigFile(cfg));
  if (geteuid() == 0) EXPECT_EQ(why, "");
  else EXPECT_THAT(why, HasSubstr("owned by the server's own user"));
}

// run_sweep: the server's sweeps (configs/sweeps beside the models), for role ci only,
// as a task for clients with the Tasks extension; cancelling the task cancels its jobs.
class RunSweepTool : public ApprovalTools {
 protected:
  void SetUp() override {
    ApprovalTools::SetUp();
    testing::WriteFile(dir_.path() / "sweeps" / "echo.yaml",
                       "name: echo\nbackend: local\ntimeout_s: 120\nruns:\n  - model: echo-args\n    nodes: [1]\n");
    testing::WriteFile(dir_.path() / "sweeps" / "sleepy.yaml",
                       "name: sleepy\nbackend: local\ntimeout_s: 300\npassthrough: [\"120\"]\nruns:\n"
                       "  - model: sleeper\n    nodes: [1, 2]\n");
    Rebuild("ci: {backends: [local], max_nodes: 2, max_steps: 5, cancel: true}");
  }
  Json Call(const std::string& method, Json params, const std::string& role = "ci") {
    Json caps = {{"extensions", {{mcp::kTasksExtension, Json::object()}}}};
    return Modern(params, caps, "ci-bot", role, method);
  }
  // Polls the task until it leaves `working` (bounded).
  Json WaitTask(const Json& task_id, int seconds) {
    Json t;
    for (int i = 0; i < seconds * 20; ++i) {
      t = Call("tasks/get", {{"taskId", task_id}})["result"];
      if (t.value("status", "") != "working") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return t;
  }
  static Json Sweep(const std::string& name) { return {{"name", "run_sweep"}, {"arguments", {{"sweep", name}}}}; }
};

TEST_F(RunSweepTool, OnlyCiRunsSweepsAndOnlyTheServersOwn) {
  Json agent = Modern(Sweep("echo"))["result"];
  EXPECT_TRUE(agent.value("isError", false));
  EXPECT_THAT(agent["content"][0]["text"].get<std::string>(), HasSubstr("only a caller with role ci"));
  Json missing = Modern(Sweep("nope"), {}, "ci-bot", "ci")["result"];
  EXPECT_THAT(missing["content"][0]["text"].get<std::string>(), HasSubstr("no sweep 'nope'"));
  // A path is not a sweep name (the schema's pattern refuses it before the handler runs).
  Json path = Modern({{"name", "run_sweep"}, {"arguments", {{"sweep", "../../etc/passwd"}}}}, {}, "ci-bot", "ci")["result"];
  EXPECT_TRUE(path.value("isError", false));
  EXPECT_EQ(JobDirs(), 0);
}

TEST_F(RunSweepTool, AsATaskItRunsUnderThePolicyAndItsResultIsFetchedAfterwards) {
  Json handle = Call("tools/call", Sweep("echo"))["result"];
  ASSERT_EQ(handle["resultType"], "task") << handle.dump();
  Json done = WaitTask(handle["taskId"], 60);
  ASSERT_EQ(done["status"], "completed") << done.dump();
  const Json& answer = done["result"]["structuredContent"];
  EXPECT_EQ(answer["sweep"], "echo");
  ASSERT_EQ(answer["runs"].size(), 1u);
  const Json& run = answer["runs"][0];
  EXPECT_EQ(run["model"], "echo-args");
  // echo-args prints no step lines: the job completed but nothing could be measured, which
  // fails the sweep (a sweep cannot vouch for a model it did not measure).
  EXPECT_EQ(run["status"], "error") << run.dump();
  EXPECT_THAT(run["detail"].get<std::string>(), HasSubstr("completed but its log has no step"));
  EXPECT_EQ(answer["status"], "failed");
  EXPECT_TRUE(LogHas(run["job_id"], "ARG<"));
  EXPECT_EQ(Audited("approved"), 1);   // by the policy, audited like submit_job from CI
}

TEST_F(RunSweepTool, CancellingTheTaskCancelsTheJobsItSubmitted) {
  Json handle = Call("tools/call", Sweep("sleepy"))["result"];
  ASSERT_EQ(handle["resultType"], "task") << handle.dump();
  // Both runs submitted (two job directories), then cancel.
  for (int i = 0; i < 400 && JobDirs() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(JobDirs(), 2);
  Json cancel = Call("tasks/cancel", {{"taskId", handle["taskId"]}});
  EXPECT_FALSE(cancel.contains("error")) << cancel.dump();
  // The handler sees the flag at its next poll and cancels both jobs (audited).
  for (int i = 0; i < 400 && Audited("sweep_cancel") < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(Audited("sweep_cancel"), 2);
  for (const auto& e : fs::directory_iterator(ws_)) {
    if (!e.is_directory() || e.path().filename().string()[0] == '.') continue;
    Json st;
    bool ended = false;
    for (int i = 0; i < 400 && !ended; ++i) {
      ASSERT_TRUE(launch::JobStatus(ws_, e.path().filename().string(), &st).ok());
      ended = st.value("state", "") != "RUNNING" && st.value("state", "") != "PENDING";
      if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    // stopped, long before its 120 s sleep could complete
    EXPECT_TRUE(ended) << st.dump();
    EXPECT_NE(st.value("state", ""), "COMPLETED") << st.dump();
  }
  EXPECT_EQ(Call("tasks/get", {{"taskId", handle["taskId"]}})["result"]["status"], "cancelled");
}

}  // namespace
}  // namespace mt::tools
