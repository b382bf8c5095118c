// A minimal MCP client over stdio: spawns a server process and speaks newline-delimited
// JSON-RPC to it (legacy era: initialize, then requests). Used by `mt demo` to drive the
// real server exactly as an agent's client would, and by tests.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "mcp/json.h"

namespace mt::mcp {

class StdioClient {
 public:
  StdioClient() = default;
  ~StdioClient();
  StdioClient(const StdioClient&) = delete;
  StdioClient& operator=(const StdioClient&) = delete;

  // Starts `argv` (argv[0] is the program) and runs the initialize handshake. Returns ""
  // or an error message.
  std::string Start(const std::vector<std::string>& argv, const std::string& client_name);
  const Json& server_info() const { return server_info_; }

  // Sends a request and waits for its response (notifications in between are skipped).
  // Returns the `result`; throws std::runtime_error with the server's error message.
  Json Request(const std::string& method, Json params,
               std::chrono::milliseconds timeout = std::chrono::seconds(120));
  // tools/call; returns the CallToolResult (isError included, not thrown).
  Json CallTool(const std::string& name, Json arguments);

  // Closes the server's stdin and waits for it to exit; returns its exit status.
  int Stop();

 private:
  bool ReadLine(std::string* line, std::chrono::steady_clock::time_point deadline);

  pid_t pid_ = -1;
  int to_server_ = -1;
  int from_server_ = -1;
  std::string buffer_;
  int next_id_ = 1;
  Json server_info_;
};

}  // namespace mt::mcp
