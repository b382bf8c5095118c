// stdio transport: newline-delimited JSON-RPC on two file descriptors. Only MCP messages
// ever reach the output fd (logs go to stderr). One legacy session per process; modern
// requests are stateless. Cheap requests are answered on the reader thread; the rest run
// on a worker pool so that a long tool call never blocks cancellation or other requests.
// Returns from Run() at EOF once every request already read has been answered.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>

#include "mcp/json_parse.h"
#include "mcp/server.h"
#include "mcp/worker_pool.h"

namespace mt::mcp {

struct StdioOptions {
  int in_fd = 0;
  int out_fd = 1;
  // Longer lines are answered -32700 and skipped without being buffered; deeper nesting is
  // refused while parsing (mcp/json_parse.h). The line limit is larger than an HTTP body's:
  // the stdio peer is the one client that spawned this process, not anyone on a network.
  size_t max_line_bytes = 64 * 1024 * 1024;
  size_t max_json_depth = JsonLimits{}.max_depth;
  Principal principal{"stdio", "agent", false};
};

class StdioTransport {
 public:
  StdioTransport(Server& server, StdioOptions options = {});
  ~StdioTransport();

  // Serves until EOF on the input. Returns 0, or 1 on a read error.
  int Run();

  // Writes one message as a line (thread-safe). False once the output is gone.
  bool Write(const Json& message);

 private:
  class OutChannel;
  void HandleLine(const char* begin, const char* end);
  // Replies produced on the reader thread are gathered and written once per read, so a
  // pipelining client costs one write(2) per batch rather than per message.
  void Queue(const Json& message);
  void Flush();
  bool WriteRaw(const std::string& bytes);

  Server& server_;
  StdioOptions options_;
  std::shared_ptr<LegacySession> session_;
  std::unique_ptr<OutChannel> channel_;
  std::mutex write_mu_;
  std::atomic<bool> output_broken_{false};
  std::atomic<bool> eof_{false};
  WorkerPool* pool_ = nullptr;   // set while Run() is serving
  std::string pending_;          // reader-thread replies not yet written
};

}  // namespace mt::mcp
