// The three MCP tools as an agent sees them: catalogue entries, read-only annotations,
// outputs that validate against their own outputSchema, and errors the model can fix.
#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <mutex>

#include <chrono>
#include <thread>

#include "mcp/call_context.h"
#include "mcp/schema_validator.h"
#include "test_util.h"
#include "mcp/server.h"
#include "mcp/session.h"
#include "mcp/tasks.h"
#include "tools/catalog/list_jobs_tool.h"
#include "tools/catalog/product_tools.h"
#include "tools/catalog/read_log_tool.h"
#include "tools/catalog/triage_log_tool.h"
#include "tools/common/iso_time.h"

namespace mt::tools {
namespace {

namespace fs = std::filesystem;

class NullContext : public mcp::CallContext {
 public:
  mcp::Era era() const override { return mcp::Era::kLegacy; }
  const mcp::Principal& caller() const override { return principal_; }
  const Json& client_capabilities() const override { return caps_; }
  bool ClientCan(const std::string&) const override { return false; }
  bool cancelled() const override { return false; }
  void ReportProgress(double, std::optional<double>, const std::string&) override {}
  void Log(mcp::LogLevel, const Json&, const std::string&) override {}
  Json AskClient(const mcp::InputRequest&, std::chrono::milliseconds) override { return nullptr; }
  std::map<std::string, Json> AskClientAll(const std::vector<mcp::InputRequest>&) override { return {}; }
  const Json& round_state() const override { return state_; }
  void set_round_state(Json s) override { state_ = std::move(s); }

 private:
  mcp::Principal principal_;
  Json caps_ = Json::object();
  Json state_;
};

class ToolsMcp : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    ws_ = dir_->path() / "outputs";
    fs::create_directories(ws_);
    const fs::path src = MT_FIXTURE_DIR;
    auto mt = testing::ReadMtimes(src / "mtimes.txt");
    int id = 9500;
    // Every committed fixture becomes a job <id>-JAX-<fixture>.log with its directory.
    for (const auto& e : fs::directory_iterator(src)) {
      if (e.path().extension() != ".log") continue;
      std::string stem = std::to_string(id++) + "-JAX-" + e.path().stem().string();
      fs::copy_file(e.path(), ws_ / (stem + ".log"));
      fs::create_directories(ws_ / stem);
      fs::create_symlink("../" + stem + ".log", ws_ / stem / "log");
      testing::SetMtime(ws_ / (stem + ".log"), testing::Iso(mt.at(e.path().filename().string())));
      names_->push_back(stem);
    }
  }
  static void TearDownTestSuite() { delete dir_; }

  mcp::ToolResult Call(const mcp::Tool& t, const Json& args) {
    if (auto err = mcp::ValidateSchema(t.input_schema, args, "arguments")) {
      mcp::ToolResult r = mcp::ToolResult::Error(*err);
      return r;
    }
    NullContext ctx;
    mcp::ToolResult r = t.handler(args, ctx);
    if (!r.is_error) {
      EXPECT_TRUE(r.structured.has_value());
      auto bad = mcp::ValidateSchema(t.output_schema, *r.structured, "structuredContent");
      EXPECT_FALSE(bad.has_value()) << t.name << " " << args << ": " << bad.value_or("");
      EXPECT_FALSE(r.content.empty());
    }
    return r;
  }

  static testing::TempDir* dir_;
  static fs::path ws_;
  static std::vector<std::string>* names_;
};

testing::TempDir* ToolsMcp::dir_ = nullptr;
fs::path ToolsMcp::ws_;
std::vector<std::string>* ToolsMcp::names_ = new std::vector<std::string>();

TEST_F(ToolsMcp, CatalogueEntriesAreReadOnlyWithSchemas) {
  for (const mcp::Tool& t : {ListJobsTool(ws_), TriageLogTool(ws_), ReadLogTool(ws_)}) {
    Json j = t.ToJson();
    EXPECT_FALSE(j["title"].get<std::string>().empty());
    EXPECT_GT(j["description"].get<std::string>().size(), 80u) << t.name;
    EXPECT_EQ(j["annotations"]["readOnlyHint"], true);
    EXPECT_EQ(j["annotations"]["destructiveHint"], false);
    EXPECT_EQ(j["inputSchema"]["type"], "object");
    EXPECT_EQ(j["outputSchema"]["type"], "object");
  }
}

TEST_F(ToolsMcp, TriageOfEveryFixtureMatchesTheOutputSchema) {
  mcp::Tool t = TriageLogTool(ws_);
  for (const auto& name : *names_) {
    std::string id = name.substr(0, 4);
    for (const char* detail : {"summary", "full"}) {
      mcp::ToolResult r = Call(t, Json{{"job", id}, {"now", "2026-02-24T12:00:00Z"}, {"detail", detail}});
      EXPECT_FALSE(r.is_error) << name << ": " << r.content.dump();
    }
  }
}

TEST_F(ToolsMcp, ListJobsAndReadLogMatchTheirSchemas) {
  mcp::ToolResult l = Call(ListJobsTool(ws_), Json{{"now", "2026-02-24T10:20:00Z"}, {"detail", "full"}, {"limit", 500}});
  ASSERT_FALSE(l.is_error) << l.content.dump();
  EXPECT_EQ((*l.structured)["total"].get<size_t>(), names_->size());
  bool saw_running = false, saw_completed = false;
  for (const auto& j : (*l.structured)["jobs"]) {
    if (j["name"].get<std::string>().find("running") != std::string::npos) saw_running = j["status"] == "running";
    if (j["name"] == "JAX-completed") saw_completed = j["status"] == "completed" && j["last_step"] == 29 && j["nodes"] == 2;
  }
  EXPECT_TRUE(saw_running);
  EXPECT_TRUE(saw_completed);
  mcp::ToolResult brief = Call(ListJobsTool(ws_), Json{{"limit", 3}});
  EXPECT_TRUE((*brief.structured)["truncated"].get<bool>());
  EXPECT_EQ((*brief.structured)["jobs"].size(), 3u);

  mcp::Tool rl = ReadLogTool(ws_);
  std::string oom_id;
  for (const auto& n : *names_)
    if (n.ends_with("-JAX-oom")) oom_id = n.substr(0, 4);
  mcp::ToolResult r = Call(rl, Json{{"job", oom_id}, {"grep", "RESOURCE_EXHAUSTED"}, {"context", 1}});
  ASSERT_FALSE(r.is_error) << r.content.dump();
  EXPECT_EQ((*r.structured)["matches"], 2);
  r = Call(rl, Json{{"job", oom_id}, {"lines", "-5:"}});
  EXPECT_EQ((*r.structured)["returned"], 5);
  r = Call(rl, Json{{"job", oom_id}, {"file", "log"}, {"lines", "1:2"}});
  EXPECT_EQ((*r.structured)["lines"][0]["text"], "JOB_ID=9004");
}

TEST_F(ToolsMcp, BadArgumentsAreToolErrorsNotCrashes) {
  mcp::Tool t = TriageLogTool(ws_);
  mcp::Tool rl = ReadLogTool(ws_);
  for (const Json& args : {Json{{"job", "../../etc/passwd"}}, Json{{"job", "/etc/passwd"}}, Json{{"job", "424242"}},
                           Json{{"job", "9500"}, {"now", "yesterday"}}, Json{{"job", "9500"}, {"extra", 1}},
                           Json{{"job", ""}}, Json{{"now", "2026-02-24T10:00:00Z"}}}) {
    mcp::ToolResult r = Call(t, args);
    EXPECT_TRUE(r.is_error) << args;
    EXPECT_FALSE(r.content.empty());
  }
  for (const Json& args : {Json{{"job", "9500"}, {"file", "../../../etc/passwd"}}, Json{{"job", "9500"}, {"grep", "(bad"}},
                           Json{{"job", "9500"}, {"lines", "9:3"}}, Json{{"job", "9500"}, {"lines", "a:b"}},
                           Json{{"job", "9500"}, {"file", "/etc/passwd"}}}) {
    mcp::ToolResult r = Call(rl, args);
    EXPECT_TRUE(r.is_error) << args;
  }
}

TEST_F(ToolsMcp, QueryTsdbRunsAsATaskForClientsThatNegotiatedTasks) {
  auto registry = std::make_shared<mcp::Registry>();
  ProductOptions o{ws_};
  RegisterProductTools(*registry, o);
  mcp::Server server(mcp::ServerInfo{}, registry);
  int id = 0;
  auto modern = [&](const std::string& method, Json params, bool tasks) {
    Json caps = Json::object();
    if (tasks) caps["extensions"][mcp::kTasksExtension] = Json::object();
    params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                       {"io.modelcontextprotocol/clientCapabilities", caps}};
    mcp::RequestEnv env;
    env.principal = mcp::Principal{"agent-1", "agent", true};
    auto r = server.Handle({{"jsonrpc", "2.0"}, {"id", ++id}, {"method", method}, {"params", params}}, env);
    return r ? *r : Json();
  };
  // A job with a log and no TSDB: the answer is a specific tool error either way.
  const Json call = {{"name", "query_tsdb"}, {"arguments", {{"job", names_->front()}, {"mode", "discover"}}}};
  Json inline_answer = modern("tools/call", call, false)["result"];
  EXPECT_EQ(inline_answer["resultType"], "complete") << inline_answer.dump();
  EXPECT_TRUE(inline_answer.value("isError", false));
  Json handle = modern("tools/call", call, true)["result"];
  ASSERT_EQ(handle["resultType"], "task") << handle.dump();
  Json done;
  for (int i = 0; i < 400; ++i) {
    done = modern("tasks/get", {{"taskId", handle["taskId"]}}, true)["result"];
    if (done.value("status", "") != "working") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(done["status"], "completed") << done.dump();
  EXPECT_EQ(done["result"]["content"], inline_answer["content"]);
  // Another principal cannot see it.
  mcp::RequestEnv other;
  other.principal = mcp::Principal{"agent-2", "agent", true};
  Json foreign = {{"jsonrpc", "2.0"}, {"id", 99}, {"method", "tasks/get"},
                  {"params", {{"taskId", handle["taskId"]},
                              {"_meta", {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                                         {"io.modelcontextprotocol/clientCapabilities",
                                          {{"extensions", {{mcp::kTasksExtension, Json::object()}}}}}}}}}};
  EXPECT_EQ((*server.Handle(foreign, other))["error"]["code"], mcp::kInvalidParams);
}


// A watch in the background of the server (a client without the Tasks extension) tells the
// sessions subscribed to its resource about each finding; reading the resource gives them.
TEST_F(ToolsMcp, ABackgroundWatchNotifiesTheSubscribersOfItsResource) {
  auto registry = std::make_shared<mcp::Registry>();
  ProductOptions o{ws_};
  RegisterProductTools(*registry, o);
  mcp::Server server(mcp::ServerInfo{}, registry);
  std::mutex mu;
  std::vector<Json> notes;
  auto session = std::make_shared<mcp::LegacySession>("watcher");
  session->SetNotifier([&](const Json& m) {
    std::lock_guard<std::mutex> lock(mu);
    notes.push_back(m);
    return true;
  });
  session->Initialize("2025-11-25", Json::object(), nullptr);
  server.Attach(session);
  // A job that runs: steps up to now, then (after the watch began) a failure and its end.
  auto stamp = [](int64_t ago) {
    std::string t = FormatIso8601(static_cast<int64_t>(std::time(nullptr)) - ago);
    t[10] = ' ';
    t.pop_back();
    return t + ",000";
  };
  const fs::path log = ws_ / "777001-JAX-live.log";
  {
    std::ofstream out(log);
    for (int i = 1; i <= 5; ++i)
      out << stamp(6 - i) << " - INFO - completed step: " << i
          << ", seconds: 1.0, TFLOP/s/device: 900.0, MFU: 36.00%, Tokens/s/device: 3290.5, loss: 7.1\n";
  }
  auto modern = [&](const std::string& method, Json params) {
    params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                       {"io.modelcontextprotocol/clientCapabilities", Json::object()}};
    mcp::RequestEnv env;
    env.principal = mcp::Principal{"agent-1", "agent", true};
    auto r = server.Handle({{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}}, env);
    return r ? *r : Json();
  };
  Json started = modern("tools/call", {{"name", "watch_job"},
                                       {"arguments", {{"action", "watch"}, {"job", "777001"}, {"interval_seconds", 1}, {"hang_seconds", 600}}}});
  ASSERT_FALSE(started["result"].value("isError", false)) << started.dump();
  const std::string uri = started["result"]["structuredContent"]["watches"][0].value("resource", "");
  ASSERT_EQ(uri.rfind("mt://watches/", 0), 0u) << started.dump();
  session->Subscribe(uri);
  {
    std::ofstream out(log, std::ios::app);
    out << stamp(0) << " - ERROR - Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
        << "ValueError: boom\n" << stamp(0) << " - INFO - Job end: exit code 1\n";
  }
  bool told = false;
  for (int i = 0; i < 300 && !told; ++i) {
    {
      std::lock_guard<std::mutex> lock(mu);
      for (const auto& n : notes) told |= n.value("method", "") == "notifications/resources/updated" && n["params"]["uri"] == uri;
    }
    if (!told) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(told);
  // The resource holds the end the notification announced.
  Json read;
  for (int i = 0; i < 200; ++i) {
    read = modern("resources/read", {{"uri", uri}});
    if (read["result"]["contents"][0].value("text", "").find("\"ended\"") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const Json view = Json::parse(read["result"]["contents"][0].value("text", "{}"));
  EXPECT_EQ("mt://watches/" + view.value("chain", ""), uri) << read.dump();
  EXPECT_EQ(view["state"], "ended") << read.dump();
  ASSERT_FALSE(view["findings"].empty()) << read.dump();
  EXPECT_TRUE(std::any_of(view["findings"].begin(), view["findings"].end(), [](const Json& f) { return f["kind"] == "ended"; }))
      << read.dump();
  // No such watch: resource not found, not an empty answer.
  EXPECT_TRUE(modern("resources/read", {{"uri", "mt://watches/nobody"}}).contains("error"));
  server.Detach(session.get());
}

}  // namespace
}  // namespace mt::tools
