#include "mcp/stdio_transport.h"

#include <gtest/gtest.h>

#include "mcp/call_context.h"
#include <unistd.h>

#include <sstream>
#include <thread>

namespace mt::mcp {
namespace {

// Runs a stdio transport over pipes: feeds `input`, closes it, returns every output line.
std::vector<Json> Session(Server& server, const std::string& input, size_t max_line_bytes = 1 << 20) {
  int in[2], out[2];
  EXPECT_EQ(pipe(in), 0);
  EXPECT_EQ(pipe(out), 0);
  StdioOptions opts;
  opts.in_fd = in[0];
  opts.out_fd = out[1];
  opts.max_line_bytes = max_line_bytes;
  int rc = -1;
  std::thread t([&] {
    rc = StdioTransport(server, opts).Run();
    close(out[1]);
  });
  std::thread writer([&] {
    size_t off = 0;
    while (off < input.size()) {
      ssize_t n = write(in[1], input.data() + off, input.size() - off);
      if (n <= 0) break;
      off += size_t(n);
    }
    close(in[1]);
  });
  std::string all;
  char buf[65536];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof buf)) > 0) all.append(buf, size_t(n));
  writer.join();
  t.join();
  close(in[0]);
  close(out[0]);
  EXPECT_EQ(rc, 0);
  std::vector<Json> lines;
  std::istringstream ss(all);
  for (std::string line; std::getline(ss, line);) {
    Json j = Json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "non-JSON on stdout: " << line;
    lines.push_back(j);
  }
  return lines;
}

class StdioTest : public ::testing::Test {
 protected:
  StdioTest() : registry(std::make_shared<Registry>()), server(ServerInfo{}, registry) {
    Tool t;
    t.name = "sleep_then_echo";
    t.description = "d";
    t.input_schema = Json::parse(R"({"type":"object","properties":{"text":{"type":"string"}}})");
    t.handler = [](const Json& a, CallContext& ctx) {
      for (int i = 0; i < 100 && !ctx.cancelled(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return ToolResult::Text(ctx.cancelled() ? "cancelled" : a.value("text", ""));
    };
    registry->AddTool(t);
  }
  std::shared_ptr<Registry> registry;
  Server server;
};

const char* kInit = R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}})";

TEST_F(StdioTest, AnswersEveryRequestBeforeExitingAtEof) {
  std::string in = std::string(kInit) + "\n" +
                   R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep_then_echo","arguments":{"text":"a"}}})" "\r\n" +
                   R"({"jsonrpc":"2.0","id":2,"method":"ping"})";   // last line without newline
  auto out = Session(server, in);
  ASSERT_EQ(out.size(), 3u);
  std::set<int> ids;
  for (const auto& m : out) ids.insert(m["id"].get<int>());
  EXPECT_EQ(ids, (std::set<int>{0, 1, 2}));
}

TEST_F(StdioTest, GarbageAndHugeLinesGetParseErrorsAndServingContinues) {
  std::string huge = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":{\"pad\":\"" + std::string(3 << 20, 'x') + "\"}}";
  std::string in = std::string("\x01\x02\xff garbage\n") + "{\"unterminated\n" + huge + "\n" + "\n   \n" + kInit + "\n" +
                   R"({"jsonrpc":"2.0","id":9,"method":"ping"})" "\n";
  auto out = Session(server, in);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0]["error"]["code"], kParseError);
  EXPECT_EQ(out[1]["error"]["code"], kParseError);
  EXPECT_EQ(out[2]["error"]["code"], kParseError);   // longer than max_line_bytes (1 MiB here)
  EXPECT_EQ(out[3]["id"], 0);
  EXPECT_EQ(out[4]["id"], 9);
}

TEST_F(StdioTest, TenMegabyteLineWithinTheDefaultLimitIsServed) {
  std::string pad(size_t(10) << 20, 'x');
  std::string in = std::string(kInit) + "\n" +
                   R"({"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"sleep_then_echo","arguments":{"text":")" +
                   pad + "\"}}}\n";
  auto out = Session(server, in, StdioOptions{}.max_line_bytes);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1]["id"], "big");
  EXPECT_EQ(out[1]["result"]["content"][0]["text"].get<std::string>().size(), pad.size());
}

TEST_F(StdioTest, DeeplyNestedArgumentsAndDuplicateKeysAreRefusedAndTheServerLivesOn) {
  // 150,000 nested arrays in the arguments of a tools/call used to overflow the stack.
  std::string deep = std::string(150'000, '[') + std::string(150'000, ']');
  std::string in = std::string(kInit) + "\n" +
                   R"({"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"sleep_then_echo","arguments":{"text":)" +
                   deep + "}}}\n" +
                   R"({"jsonrpc":"2.0","id":"dup","method":"tools/call","params":{"name":"sleep_then_echo","name":"x","arguments":{"text":"a"}}})" +
                   "\n" + R"({"jsonrpc":"2.0","id":"after","method":"ping"})" + "\n";
  auto out = Session(server, in);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[1]["error"]["code"], kParseError);
  EXPECT_NE(out[1]["error"]["message"].get<std::string>().find("nested deeper than 64"), std::string::npos);
  EXPECT_EQ(out[2]["error"]["code"], kParseError);
  EXPECT_NE(out[2]["error"]["message"].get<std::string>().find("duplicate object key \"name\""), std::string::npos);
  EXPECT_EQ(out[3]["id"], "after");
}

TEST_F(StdioTest, CancellationReachesARunningTool) {
  std::string in = std::string(kInit) + "\n" +
                   R"({"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"sleep_then_echo","arguments":{"text":"a"}}})" "\n" +
                   R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"user"}})" "\n";
  auto out = Session(server, in);
  // The initialize answer only: a cancelled request is not answered.
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]["id"], 0);
}

}  // namespace
}  // namespace mt::mcp
