// The Tasks extension: TaskStore on its own (ownership, caps, expiry, cancellation, input
// requests) and through the dispatcher (negotiation, creation, tasks/get|update|cancel).
#include "mcp/tasks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <regex>
#include <set>
#include <thread>

#include "mcp/call_context.h"
#include "mcp/server.h"

namespace mt::mcp {
namespace {

using std::chrono::milliseconds;

const Principal kAlice{"alice", "agent", true};
const Principal kBob{"bob", "agent", true};

// A settable clock (unix ms) for expiry tests.
struct FakeClock {
  std::shared_ptr<std::atomic<int64_t>> now = std::make_shared<std::atomic<int64_t>>(1'785'000'000'000);
  TaskStore::Clock fn() const {
    auto n = now;
    return [n] { return n->load(); };
  }
  void Advance(int64_t ms) { *now += ms; }
};

// The JSON-RPC error a call throws (code and message), or {0, ""}.
std::pair<int, std::string> ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const RpcError& e) {
    return {e.code(), e.what()};
  }
  return {0, ""};
}

TaskOptions Small() {
  TaskOptions o;
  o.max_active_per_caller = 3;
  o.max_kept_per_caller = 5;
  o.max_tasks = 8;
  o.keep_finished = milliseconds(60'000);
  return o;
}

TEST(TaskStoreTest, CreatedTaskIsWorkingAndVisibleAtOnce) {
  FakeClock clock;
  TaskStore store(Small(), clock.fn());
  auto t = store.Create(kAlice, "slow");
  Json created = store.Created(*t);
  EXPECT_EQ(created["resultType"], "task");
  EXPECT_EQ(created["status"], "working");
  EXPECT_EQ(created["taskId"], t->id);
  EXPECT_FALSE(created.contains("ttl"));
  EXPECT_FALSE(created.contains("pollInterval"));
  EXPECT_TRUE(created["ttlMs"].is_number_integer());
  EXPECT_GT(created["ttlMs"].get<int64_t>(), 0);
  EXPECT_TRUE(created["pollIntervalMs"].is_number_integer());
  EXPECT_TRUE(std::regex_match(created["createdAt"].get<std::string>(),
                               std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)")));
  Json got = store.Get(t->id, kAlice);
  EXPECT_EQ(got["resultType"], "complete");
  EXPECT_EQ(got["status"], "working");
  EXPECT_FALSE(got.contains("result"));
  EXPECT_FALSE(got.contains("error"));
  EXPECT_FALSE(got.contains("requestState"));
}

TEST(TaskStoreTest, IdsAreUnguessable) {
  TaskOptions o;
  o.max_active_per_caller = 2000;
  o.max_kept_per_caller = 2000;
  o.max_tasks = 2000;
  TaskStore store(o);
  std::set<std::string> ids;
  for (int i = 0; i < 1000; ++i) {
    auto t = store.Create(kAlice, "x");
    EXPECT_TRUE(std::regex_match(t->id, std::regex("[0-9a-f]{32}"))) << t->id;   // 128 random bits
    ids.insert(t->id);
  }
  EXPECT_EQ(ids.size(), 1000u);
}

TEST(TaskStoreTest, UnknownIdIsInvalidParams) {
  TaskStore store(Small());
  auto [code, msg] = ErrorOf([&] { store.Get("no-such-task", kAlice); });
  EXPECT_EQ(code, kInvalidParams);
  EXPECT_EQ(ErrorOf([&] { store.Cancel("no-such-task", kAlice); }).first, kInvalidParams);
  EXPECT_EQ(ErrorOf([&] { store.Update("no-such-task", kAlice, Json::object()); }).first, kInvalidParams);
  EXPECT_EQ(ErrorOf([&] { store.Get("", kAlice); }).first, kInvalidParams);
}

TEST(TaskStoreTest, AnotherPrincipalSeesTheSameErrorAsForAnUnknownId) {
  TaskStore store(Small());
  auto t = store.Create(kAlice, "slow");
  auto unknown = ErrorOf([&] { store.Get("0123456789abcdef0123456789abcdef", kBob); });
  EXPECT_EQ(ErrorOf([&] { store.Get(t->id, kBob); }), unknown);
  EXPECT_EQ(ErrorOf([&] { store.Cancel(t->id, kBob); }), unknown);
  EXPECT_EQ(ErrorOf([&] { store.Update(t->id, kBob, Json::object()); }), unknown);
  // Bob's attempts changed nothing.
  EXPECT_FALSE(t->cancel->load());
  EXPECT_EQ(store.Get(t->id, kAlice)["status"], "working");
  // Same name is the same principal, whatever the role.
  EXPECT_EQ(store.Get(t->id, Principal{"alice", "ci", true})["status"], "working");
}

TEST(TaskStoreTest, CompletedTaskInlinesItsResult) {
  TaskStore store(Small());
  auto t = store.Create(kAlice, "slow");
  Json result = {{"content", {{{"type", "text"}, {"text", "done"}}}}};
  store.Complete(*t, result);
  store.Finished(*t);
  Json got = store.Get(t->id, kAlice);
  EXPECT_EQ(got["status"], "completed");
  EXPECT_EQ(got["result"], result);
  EXPECT_FALSE(got.contains("error"));
}

TEST(TaskStoreTest, FailedTaskInlinesTheJsonRpcError) {
  TaskStore store(Small());
  auto t = store.Create(kAlice, "slow");
  store.Fail(*t, RpcError(kInternalError, "boom"));
  store.Finished(*t);
  Json got = store.Get(t->id, kAlice);
  EXPECT_EQ(got["status"], "failed");
  EXPECT_EQ(got["error"]["code"], kInternalError);
  EXPECT_EQ(got["error"]["message"], "boom");
  EXPECT_EQ(got["statusMessage"], "boom");
  EXPECT_FALSE(got.contains("result"));
}

TEST(TaskStoreTest, CancelAfterCompletionChangesNothing) {
  TaskStore store(Small());
  auto t = store.Create(kAlice, "slow");
  store.Complete(*t, {{"content", Json::array()}});
  store.Finished(*t);
  EXPECT_NO_THROW(store.Cancel(t->id, kAlice));   // the same empty ack
  EXPECT_NO_THROW(store.Cancel(t->id, kAlice));
  EXPECT_FALSE(t->cancel->load());
  Json got = store.Get(t->id, kAlice);
  EXPECT_EQ(got["status"], "completed");
  EXPECT_TRUE(got.contains("result"));
}

TEST(TaskStoreTest, CancelWhileRunningRaisesTheFlagAndWins) {
  TaskStore store(Small());
  auto t = store.Create(kAlice, "slow");
  store.Cancel(t->id, kAlice);
  EXPECT_TRUE(t->cancel->load());   // what CallContext::cancelled() reads
  EXPECT_EQ(store.Get(t->id, kAlice)["status"], "cancelled");
  // The handler's late result is dropped; until it returns its slot still counts.
  store.Complete(*t, {{"content", Json::array()}});
  EXPECT_EQ(store.Get(t->id, kAlice)["status"], "cancelled");
  EXPECT_FALSE(store.Get(t->id, kAlice).contains("result"));
  EXPECT_EQ(store.running("alice"), 1u);
  store.Finished(*t);
  EXPECT_EQ(store.running("alice"), 0u);
}

TEST(TaskStoreTest, CapsRunningTasksPerCaller) {
  TaskStore store(Small());
  std::vector<std::shared_ptr<Task>> mine;
  for (int i = 0; i < 3; ++i) mine.push_back(store.Create(kAlice, "slow"));
  try {
    store.Create(kAlice, "slow");
    FAIL() << "a fourth running task was accepted";
  } catch (const RpcError& e) {
    EXPECT_EQ(e.code(), kTooManyTasks);
    EXPECT_EQ(e.data()["limit"], 3);
  }
  EXPECT_NO_THROW(store.Create(kBob, "slow"));   // the cap is per caller
  // A cancelled task keeps its slot until its handler returns.
  store.Cancel(mine[0]->id, kAlice);
  EXPECT_EQ(ErrorOf([&] { store.Create(kAlice, "slow"); }).first, kTooManyTasks);
  store.Finished(*mine[0]);
  EXPECT_NO_THROW(store.Create(kAlice, "slow"));
}

TEST(TaskStoreTest, FloodOfCreationsStaysBounded) {
  TaskStore store(Small());
  int accepted = 0, refused = 0;
  for (int i = 0; i < 10'000; ++i) {
    try {
      auto t = store.Create(kAlice, "slow");
      ++accepted;
      if (i % 2 == 0) {   // half of them finish at once, the rest keep running
        store.Complete(*t, {{"content", Json::array()}});
        store.Finished(*t);
      }
    } catch (const RpcError& e) {
      ASSERT_EQ(e.code(), kTooManyTasks);
      ++refused;
    }
    ASSERT_LE(store.running("alice"), 3u);
    ASSERT_LE(store.size(), 5u);   // max_kept_per_caller: the oldest finished make room
  }
  EXPECT_GT(accepted, 3);
  EXPECT_GT(refused, 9'000);
  // Other callers are not locked out by Alice's flood.
  EXPECT_NO_THROW(store.Create(kBob, "slow"));
}

TEST(TaskStoreTest, OldestFinishedTaskMakesRoomForANewOne) {
  TaskStore store(Small());
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    auto t = store.Create(kAlice, "slow");
    store.Complete(*t, {{"content", Json::array()}});
    store.Finished(*t);
    ids.push_back(t->id);
  }
  store.Create(kAlice, "slow");
  EXPECT_EQ(ErrorOf([&] { store.Get(ids[0], kAlice); }).first, kInvalidParams);
  EXPECT_EQ(store.Get(ids[1], kAlice)["status"], "completed");
}

TEST(TaskStoreTest, StoreWideCapEvictsFinishedTasksOfAnyCaller) {
  TaskStore store(Small());   // max_tasks 8
  for (const char* who : {"a", "b", "c", "d"}) {
    for (int i = 0; i < 2; ++i) {
      auto t = store.Create(Principal{who, "agent", true}, "slow");
      store.Complete(*t, {{"content", Json::array()}});
      store.Finished(*t);
    }
  }
  EXPECT_EQ(store.size(), 8u);
  store.Create(Principal{"e", "agent", true}, "slow");
  EXPECT_EQ(store.size(), 8u);
}

TEST(TaskStoreTest, StoreFullOfRunningTasksRefusesNewOnes) {
  TaskStore store(Small());   // max_tasks 8, 3 running per caller
  int made = 0;
  for (const char* who : {"a", "b", "c"}) {
    for (int i = 0; i < 3 && made < 8; ++i, ++made) store.Create(Principal{who, "agent", true}, "slow");
  }
  EXPECT_EQ(ErrorOf([&] { store.Create(Principal{"z", "agent", true}, "slow"); }).first, kTooManyTasks);
}

TEST(TaskStoreTest, FinishedTasksExpireAfterKeepFinished) {
  FakeClock clock;
  TaskStore store(Small(), clock.fn());
  auto done = store.Create(kAlice, "slow");
  auto running = store.Create(kAlice, "slow");
  clock.Advance(1'000);
  store.Complete(*done, {{"content", Json::array()}});
  store.Finished(*done);
  Json got = store.Get(done->id, kAlice);
  EXPECT_EQ(got["ttlMs"], 1'000 + 60'000);   // from creation to the end of keep_finished
  clock.Advance(59'999);
  EXPECT_EQ(store.Get(done->id, kAlice)["status"], "completed");   // never before its ttlMs
  clock.Advance(1);
  auto [code, msg] = ErrorOf([&] { store.Get(done->id, kAlice); });
  EXPECT_EQ(code, kInvalidParams);
  EXPECT_EQ(ErrorOf([&] { store.Get("unknown", kAlice); }).second, msg);   // expired looks like unknown
  // A task that still runs never expires; its ttlMs keeps moving.
  clock.Advance(10 * 60'000);
  EXPECT_EQ(store.Get(running->id, kAlice)["status"], "working");
  EXPECT_GT(store.Get(running->id, kAlice)["ttlMs"].get<int64_t>(), 10 * 60'000);
}

TEST(TaskStoreTest, CancelledTaskExpiresOnlyAfterItsHandlerReturned) {
  FakeClock clock;
  TaskStore store(Small(), clock.fn());
  auto t = store.Create(kAlice, "slow");
  store.Cancel(t->id, kAlice);
  clock.Advance(120'000);
  EXPECT_EQ(store.Get(t->id, kAlice)["status"], "cancelled");   // handler still running
  store.Finished(*t);
  clock.Advance(1);
  EXPECT_EQ(ErrorOf([&] { store.Get(t->id, kAlice); }).first, kInvalidParams);
}

InputRequest Elicit(const std::string& key) {
  return {key, "elicitation/create", {{"message", "?"}, {"requestedSchema", {{"type", "object"}}}}};
}

Json Accept(const std::string& name) { return {{"action", "accept"}, {"content", {{"name", name}}}}; }

// Waits until the task's status is `status` (the handler thread sets it).
void WaitFor(TaskStore& store, const std::string& id, const std::string& status) {
  for (int i = 0; i < 500 && store.Get(id, kAlice)["status"] != status; ++i) std::this_thread::sleep_for(milliseconds(5));
  ASSERT_EQ(store.Get(id, kAlice)["status"], status);
}

TEST(TaskStoreTest, InputRequestsWaitForTasksUpdateAndAcceptPartialAnswers) {
  TaskStore store(Small());
  auto t = store.Create(kAlice, "multi");
  std::map<std::string, Json> answers;
  std::thread handler([&] { answers = store.AwaitInput(*t, {Elicit("first"), Elicit("second")}, std::chrono::seconds(10)); });
  WaitFor(store, t->id, "input_required");
  Json got = store.Get(t->id, kAlice);
  EXPECT_EQ(got["inputRequests"].size(), 2u);
  EXPECT_EQ(got["inputRequests"]["first"]["method"], "elicitation/create");

  // A wrong shape for an outstanding key: -32602 and nothing applied, not even the good one.
  EXPECT_EQ(ErrorOf([&] { store.Update(t->id, kAlice, {{"first", Accept("a")}, {"second", {{"oops", 1}}}}); }).first,
            kInvalidParams);
  EXPECT_EQ(store.Get(t->id, kAlice)["inputRequests"].size(), 2u);
  EXPECT_EQ(ErrorOf([&] { store.Update(t->id, kAlice, Json::array()); }).first, kInvalidParams);
  // Unknown keys are ignored.
  EXPECT_NO_THROW(store.Update(t->id, kAlice, {{"unknown-key", {{"ignored", true}}}}));
  // Partial: the answered key leaves, the task stays input_required.
  store.Update(t->id, kAlice, {{"first", Accept("a")}});
  got = store.Get(t->id, kAlice);
  EXPECT_EQ(got["status"], "input_required");
  EXPECT_FALSE(got["inputRequests"].contains("first"));
  EXPECT_TRUE(got["inputRequests"].contains("second"));
  // Answering an already answered key changes nothing.
  store.Update(t->id, kAlice, {{"first", Accept("changed")}});
  store.Update(t->id, kAlice, {{"second", Accept("b")}});
  handler.join();
  EXPECT_EQ(answers["first"], Accept("a"));
  EXPECT_EQ(answers["second"], Accept("b"));
  EXPECT_EQ(store.Get(t->id, kAlice)["status"], "working");
}

TEST(TaskStoreTest, CancelWakesAHandlerWaitingForInput) {
  TaskStore store(Small());
  auto t = store.Create(kAlice, "ask");
  std::atomic<int> code{0};
  std::thread handler([&] {
    try {
      store.AwaitInput(*t, {Elicit("q")}, std::chrono::seconds(30));
    } catch (const RpcError& e) {
      code = e.code();
    }
  });
  WaitFor(store, t->id, "input_required");
  store.Cancel(t->id, kAlice);
  handler.join();
  EXPECT_EQ(code, kInternalError);
  Json got = store.Get(t->id, kAlice);
  EXPECT_EQ(got["status"], "cancelled");
  EXPECT_FALSE(got.contains("inputRequests"));
}

TEST(TaskStoreTest, UnansweredInputTimesOut) {
  TaskStore store(Small());
  auto t = store.Create(kAlice, "ask");
  EXPECT_EQ(ErrorOf([&] { store.AwaitInput(*t, {Elicit("q")}, milliseconds(50)); }).first, kInternalError);
  EXPECT_EQ(store.Get(t->id, kAlice)["status"], "working");
}

TEST(TaskStoreTest, DeclaresTasksNeedsAnObject) {
  EXPECT_TRUE(DeclaresTasks(Json::parse(R"({"extensions":{"io.modelcontextprotocol/tasks":{}}})")));
  EXPECT_FALSE(DeclaresTasks(Json::parse(R"({"extensions":{"io.modelcontextprotocol/tasks":true}})")));
  EXPECT_FALSE(DeclaresTasks(Json::parse(R"({"extensions":[]})")));
  EXPECT_FALSE(DeclaresTasks(Json::object()));
  RpcError e = TasksExtensionRequired("x");
  EXPECT_EQ(e.code(), kMissingRequiredClientCapability);
  EXPECT_TRUE(e.data()["requiredCapabilities"]["extensions"].contains(kTasksExtension));
}

// ---- through the dispatcher ----

class TaskServerTest : public ::testing::Test {
 protected:
  TaskServerTest() : registry(std::make_shared<Registry>()) {
    Tool slow;
    slow.name = "slow";
    slow.description = "runs until released or cancelled";
    slow.task_support = TaskSupport::kOptional;
    slow.handler = [this](const Json&, CallContext& ctx) {
      started = true;
      while (!release && !ctx.cancelled()) std::this_thread::sleep_for(milliseconds(2));
      if (ctx.cancelled()) saw_cancel = true;
      ctx.ReportProgress(1, 1, "all done");
      return ToolResult::Text("slow done in " + (ctx.task_id().empty() ? std::string("request") : "task"));
    };
    registry->AddTool(slow);

    Tool required = slow;
    required.name = "only_task";
    required.task_support = TaskSupport::kRequired;
    required.handler = [](const Json&, CallContext&) { return ToolResult::Text("ran"); };
    registry->AddTool(required);

    Tool approve;
    approve.name = "approve";
    approve.description = "asks for approval, the same gate as outside tasks";
    approve.task_support = TaskSupport::kOptional;
    approve.handler = [](const Json&, CallContext& ctx) {
      Json a = ctx.AskClient({"approve", "elicitation/create",
                              {{"message", "Submit?"}, {"requestedSchema", {{"type", "object"}}}}});
      return ToolResult::Text("approval=" + a.value("action", ""));
    };
    registry->AddTool(approve);

    Tool broken;
    broken.name = "broken";
    broken.description = "fails at the protocol level";
    broken.task_support = TaskSupport::kOptional;
    broken.handler = [](const Json&, CallContext&) -> ToolResult { throw RpcError(kInternalError, "exploded"); };
    registry->AddTool(broken);

    Tool ask_first;
    ask_first.name = "ask_first";
    ask_first.description = "asks in the request, then continues as a task";
    ask_first.task_support = TaskSupport::kRequired;
    ask_first.task_on_demand = true;
    ask_first.handler = [](const Json&, CallContext& ctx) {
      Json a = ctx.AskClient({"name", "elicitation/create", {{"message", "Name?"}, {"requestedSchema", {{"type", "object"}}}}});
      bool task = ctx.ContinueAsTask();
      Json again = ctx.AskClient({"name", "elicitation/create", {{"message", "Name?"}, {"requestedSchema", {{"type", "object"}}}}});
      return ToolResult::Text(std::string(task ? "task" : "request") + ":" + a["content"].value("name", "") + "/" +
                              again["content"].value("name", ""));
    };
    registry->AddTool(ask_first);

    ServerOptions opts;
    opts.tasks.max_active_per_caller = 4;
    server = std::make_unique<Server>(ServerInfo{}, registry, opts);
  }
  ~TaskServerTest() override {
    release = true;
    server.reset();
  }

  Json Modern(const std::string& method, Json params, bool tasks = true, const Principal& who = kAlice) {
    Json caps = {{"elicitation", Json::object()}};
    if (tasks) caps["extensions"][kTasksExtension] = Json::object();
    params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                       {"io.modelcontextprotocol/clientCapabilities", caps}};
    RequestEnv env;
    env.principal = who;
    auto r = server->Handle({{"jsonrpc", "2.0"}, {"id", ++id}, {"method", method}, {"params", params}}, env);
    return r ? *r : Json();
  }
  Json Call(const std::string& tool, bool tasks = true, const Principal& who = kAlice) {
    return Modern("tools/call", {{"name", tool}, {"arguments", Json::object()}}, tasks, who);
  }
  Json Get(const std::string& task, const Principal& who = kAlice) {
    return Modern("tasks/get", {{"taskId", task}}, true, who);
  }
  Json WaitTerminal(const std::string& task) {
    for (int i = 0; i < 1000; ++i) {
      Json r = Get(task);
      std::string s = r["result"].value("status", "");
      if (s == "completed" || s == "failed" || s == "cancelled") return r["result"];
      std::this_thread::sleep_for(milliseconds(5));
    }
    return Json();
  }
  Json WaitStatus(const std::string& task, const std::string& status) {
    for (int i = 0; i < 1000; ++i) {
      Json r = Get(task)["result"];
      if (r.value("status", "") == status) return r;
      std::this_thread::sleep_for(milliseconds(5));
    }
    return Json();
  }

  std::shared_ptr<Registry> registry;
  std::unique_ptr<Server> server;
  std::atomic<bool> started{false}, release{false}, saw_cancel{false};
  int id = 0;
};

TEST_F(TaskServerTest, DiscoverAdvertisesTheExtension) {
  Json r = Modern("server/discover", Json::object());
  EXPECT_TRUE(r["result"]["capabilities"]["extensions"].contains(kTasksExtension));
  EXPECT_FALSE(r["result"]["capabilities"].contains("tasks"));
}

TEST_F(TaskServerTest, TaskSupportingToolBecomesATaskAndItsResultStaysRetrievable) {
  Json r = Call("slow");
  ASSERT_EQ(r["result"]["resultType"], "task") << r.dump();
  std::string task = r["result"]["taskId"];
  EXPECT_FALSE(r["result"].contains("content"));
  EXPECT_FALSE(r["result"].contains("requestState"));
  EXPECT_EQ(Get(task)["result"]["status"], "working");   // durable at once
  release = true;
  Json done = WaitTerminal(task);
  EXPECT_EQ(done["status"], "completed");
  EXPECT_EQ(done["result"]["content"][0]["text"], "slow done in task");
  EXPECT_EQ(done["statusMessage"], "1/1: all done");   // progress shows as the status message
  EXPECT_EQ(Get(task)["result"]["status"], "completed");   // and again: kept after completion
}

TEST_F(TaskServerTest, WithoutTheExtensionTheCallIsAnsweredInTheRequest) {
  release = true;
  Json r = Call("slow", /*tasks=*/false);
  EXPECT_EQ(r["result"]["resultType"], "complete");
  EXPECT_EQ(r["result"]["content"][0]["text"], "slow done in request");
  EXPECT_FALSE(r["result"].contains("taskId"));
}

TEST_F(TaskServerTest, RequiredTaskToolRefusesAClientWithoutTheExtension) {
  Json r = Call("only_task", /*tasks=*/false);
  EXPECT_EQ(r["error"]["code"], kMissingRequiredClientCapability);
  EXPECT_TRUE(r["error"]["data"]["requiredCapabilities"]["extensions"].contains(kTasksExtension));
}

TEST_F(TaskServerTest, TaskMethodsNeedTheExtensionAndOnlyThreeExist) {
  EXPECT_EQ(Modern("tasks/get", {{"taskId", "x"}}, false)["error"]["code"], kMissingRequiredClientCapability);
  EXPECT_EQ(Modern("tasks/update", {{"taskId", "x"}, {"inputResponses", Json::object()}}, false)["error"]["code"],
            kMissingRequiredClientCapability);
  EXPECT_EQ(Modern("tasks/cancel", {{"taskId", "x"}}, false)["error"]["code"], kMissingRequiredClientCapability);
  EXPECT_EQ(Modern("tasks/result", {{"taskId", "x"}})["error"]["code"], kMethodNotFound);
  EXPECT_EQ(Modern("tasks/list", Json::object())["error"]["code"], kMethodNotFound);
  EXPECT_EQ(Modern("tasks/get", Json::object())["error"]["code"], kInvalidParams);
  EXPECT_EQ(Modern("tasks/get", {{"taskId", 5}})["error"]["code"], kInvalidParams);
  EXPECT_EQ(Get("nope")["error"]["code"], kInvalidParams);
}

TEST_F(TaskServerTest, TaskNotificationsNeedTheExtension) {
  struct Sink : Channel {
    bool CanSend() const override { return true; }
    bool Send(const Json&) override { return true; }
  } sink;
  Json params = {{"notifications", {{"taskIds", {"x"}}}},
                 {"_meta", {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                            {"io.modelcontextprotocol/clientCapabilities", Json::object()}}}};
  RequestEnv env;
  env.channel = &sink;
  Json r = *server->Handle({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "subscriptions/listen"}, {"params", params}}, env);
  EXPECT_EQ(r["error"]["code"], kMissingRequiredClientCapability);
}

TEST_F(TaskServerTest, LegacySessionsHaveNoTasks) {
  LegacySession session("s");
  RequestEnv env;
  env.session = &session;
  server->Handle({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"},
                  {"params", {{"protocolVersion", "2025-11-25"}, {"capabilities", {{"extensions", {{kTasksExtension, Json::object()}}}}}}}},
                 env);
  release = true;
  Json r = *server->Handle({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/call"}, {"params", {{"name", "slow"}}}}, env);
  EXPECT_EQ(r["result"]["content"][0]["text"], "slow done in request");
  r = *server->Handle({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "tasks/get"}, {"params", {{"taskId", "x"}}}}, env);
  EXPECT_EQ(r["error"]["code"], kMethodNotFound);
}

TEST_F(TaskServerTest, CancelReachesTheHandlersCancellationToken) {
  std::string task = Call("slow")["result"]["taskId"];
  for (int i = 0; i < 500 && !started; ++i) std::this_thread::sleep_for(milliseconds(2));
  Json ack = Modern("tasks/cancel", {{"taskId", task}});
  EXPECT_EQ(ack["result"]["resultType"], "complete");
  EXPECT_FALSE(ack["result"].contains("status"));
  EXPECT_EQ(Get(task)["result"]["status"], "cancelled");
  for (int i = 0; i < 500 && !saw_cancel; ++i) std::this_thread::sleep_for(milliseconds(2));
  EXPECT_TRUE(saw_cancel);
  for (int i = 0; i < 500 && server->tasks().running("alice"); ++i) std::this_thread::sleep_for(milliseconds(2));
  EXPECT_EQ(server->tasks().running("alice"), 0u);
  EXPECT_EQ(Get(task)["result"]["status"], "cancelled");   // the handler's late answer is dropped
}

TEST_F(TaskServerTest, AnotherPrincipalCannotReadOrCancel) {
  std::string task = Call("slow")["result"]["taskId"];
  Json unknown = Get("0123456789abcdef0123456789abcdef", kBob)["error"];
  EXPECT_EQ(Get(task, kBob)["error"], unknown);
  EXPECT_EQ(Modern("tasks/cancel", {{"taskId", task}}, true, kBob)["error"], unknown);
  EXPECT_EQ(Modern("tasks/update", {{"taskId", task}, {"inputResponses", Json::object()}}, true, kBob)["error"], unknown);
  EXPECT_EQ(Get(task)["result"]["status"], "working");
  release = true;
  EXPECT_EQ(WaitTerminal(task)["status"], "completed");
}

TEST(TaskRefusals, ForeignTaskIdsReachTheAuditHook) {
  auto registry = std::make_shared<Registry>();
  Tool t;
  t.name = "t";
  t.description = "d";
  t.task_support = TaskSupport::kOptional;
  t.handler = [](const Json&, CallContext&) { return ToolResult::Text("ok"); };
  registry->AddTool(t);
  std::vector<std::string> refused;
  ServerOptions opts;
  opts.on_refusal = [&](const Principal& who, const std::string& method, const std::string& name, const std::string&) {
    refused.push_back(who.name + " " + method + " " + name);
  };
  Server server(ServerInfo{}, registry, opts);
  Json meta = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
               {"io.modelcontextprotocol/clientCapabilities", {{"extensions", {{kTasksExtension, Json::object()}}}}}};
  RequestEnv env;
  env.principal = kBob;
  Json r = *server.Handle({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tasks/cancel"}, {"params", {{"taskId", "abc"}, {"_meta", meta}}}}, env);
  EXPECT_EQ(r["error"]["code"], kInvalidParams);
  EXPECT_EQ(r["error"]["message"], kTaskNotFound);
  EXPECT_EQ(refused, std::vector<std::string>{"bob tasks/cancel abc"});
}

TEST_F(TaskServerTest, ApprovalInsideATaskGoesThroughInputRequired) {
  std::string task = Call("approve")["result"]["taskId"];
  Json parked = WaitStatus(task, "input_required");
  ASSERT_TRUE(parked.contains("inputRequests")) << parked.dump();
  EXPECT_EQ(parked["inputRequests"]["approve"]["method"], "elicitation/create");
  EXPECT_EQ(parked["inputRequests"]["approve"]["params"]["message"], "Submit?");
  Json ack = Modern("tasks/update", {{"taskId", task}, {"inputResponses", {{"approve", {{"action", "accept"}, {"content", Json::object()}}}}}});
  EXPECT_EQ(ack["result"]["resultType"], "complete");
  Json done = WaitTerminal(task);
  EXPECT_EQ(done["status"], "completed");
  EXPECT_EQ(done["result"]["content"][0]["text"], "approval=accept");
}

TEST_F(TaskServerTest, ApprovalNeedsTheElicitationCapabilityInsideATaskToo) {
  Json caps = {{"extensions", {{kTasksExtension, Json::object()}}}};   // no elicitation
  Json params = {{"name", "approve"}, {"arguments", Json::object()},
                 {"_meta", {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"}, {"io.modelcontextprotocol/clientCapabilities", caps}}}};
  RequestEnv env;
  env.principal = kAlice;
  std::string task = (*server->Handle({{"jsonrpc", "2.0"}, {"id", 99}, {"method", "tools/call"}, {"params", params}}, env))["result"]["taskId"];
  Json done = WaitTerminal(task);
  EXPECT_EQ(done["status"], "failed");
  EXPECT_EQ(done["error"]["code"], kMissingRequiredClientCapability);
}

TEST_F(TaskServerTest, ProtocolErrorFailsTheTask) {
  std::string task = Call("broken")["result"]["taskId"];
  Json done = WaitTerminal(task);
  EXPECT_EQ(done["status"], "failed");
  EXPECT_EQ(done["error"]["code"], kInternalError);
  EXPECT_FALSE(done.contains("result"));
}

TEST_F(TaskServerTest, FloodOfTaskCreationsIsRefusedWithTooManyTasks) {
  std::vector<std::string> tasks;
  for (int i = 0; i < 4; ++i) {
    Json r = Call("slow");
    ASSERT_EQ(r["result"]["resultType"], "task") << r.dump();
    tasks.push_back(r["result"]["taskId"]);
  }
  for (int i = 0; i < 50; ++i) {
    Json r = Call("slow");
    ASSERT_EQ(r["error"]["code"], kTooManyTasks) << r.dump();
    EXPECT_EQ(r["error"]["data"]["limit"], 4);
  }
  EXPECT_EQ(Call("slow", true, kBob)["result"]["resultType"], "task");   // other callers unaffected
  for (const auto& t : tasks) Modern("tasks/cancel", {{"taskId", t}});
  for (int i = 0; i < 500 && server->tasks().running("alice"); ++i) std::this_thread::sleep_for(milliseconds(2));
  EXPECT_EQ(Call("slow")["result"]["resultType"], "task");
}

TEST_F(TaskServerTest, OnDemandToolAsksInTheRequestThenBecomesATask) {
  Json r1 = Call("ask_first");
  ASSERT_EQ(r1["result"]["resultType"], "input_required") << r1.dump();
  EXPECT_FALSE(r1["result"].contains("taskId"));
  Json params = {{"name", "ask_first"}, {"arguments", Json::object()},
                 {"inputResponses", {{"name", {{"action", "accept"}, {"content", {{"name", "Alice"}}}}}}},
                 {"requestState", r1["result"]["requestState"]}};
  Json r2 = Modern("tools/call", params);
  ASSERT_EQ(r2["result"]["resultType"], "task") << r2.dump();
  EXPECT_FALSE(r2["result"].contains("requestState"));
  EXPECT_FALSE(r2["result"].contains("inputRequests"));
  Json done = WaitTerminal(r2["result"]["taskId"]);
  EXPECT_EQ(done["status"], "completed");
  EXPECT_EQ(done["result"]["content"][0]["text"], "task:Alice/Alice");   // earlier answers carried over
}

}  // namespace
}  // namespace mt::mcp
