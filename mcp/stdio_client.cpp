#include "mcp/stdio_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

#include "mcp/json_rpc.h"

namespace mt::mcp {

StdioClient::~StdioClient() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    Stop();
  }
}

std::string StdioClient::Start(const std::vector<std::string>& argv, const std::string& client_name) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) return std::string("pipe: ") + strerror(errno);
  pid_ = fork();
  if (pid_ < 0) return std::string("fork: ") + strerror(errno);
  if (pid_ == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  to_server_ = in[1];
  from_server_ = out[0];
  signal(SIGPIPE, SIG_IGN);
  try {
    Json init = Request("initialize", {{"protocolVersion", "2025-11-25"},
                                       {"capabilities", Json::object()},
                                       {"clientInfo", {{"name", client_name}, {"version", "0.1.0"}}}});
    server_info_ = init.value("serverInfo", Json::object());
    std::string note = MakeNotification("notifications/initialized", Json()).dump() + "\n";
    if (write(to_server_, note.data(), note.size()) < 0) return "cannot write to the server";
  } catch (const std::exception& e) {
    return std::string("initialize failed: ") + e.what();
  }
  return "";
}

bool StdioClient::ReadLine(std::string* line, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      *line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return true;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{from_server_, POLLIN, 0};
    if (poll(&p, 1, int(left.count())) <= 0) continue;
    char chunk[65536];
    ssize_t n = read(from_server_, chunk, sizeof chunk);
    if (n <= 0) return false;
    buffer_.append(chunk, size_t(n));
  }
}

Json StdioClient::Request(const std::string& method, Json params, std::chrono::milliseconds timeout) {
  int id = next_id_++;
  std::string line = MakeRequest(id, method, std::move(params)).dump() + "\n";
  if (write(to_server_, line.data(), line.size()) != ssize_t(line.size()))
    throw std::runtime_error("cannot write to the server (it exited?)");
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string reply;
  while (ReadLine(&reply, deadline)) {
    Json msg = Json::parse(reply, nullptr, false);
    if (msg.is_discarded()) throw std::runtime_error("the server wrote a non-JSON line: " + reply.substr(0, 200));
    if (!msg.contains("id") || msg["id"] != id) continue;   // notifications, other replies
    if (msg.contains("error")) throw std::runtime_error(msg["error"].value("message", "error"));
    return msg["result"];
  }
  throw std::runtime_error(method + ": no answer from the server");
}

Json StdioClient::CallTool(const std::string& name, Json arguments) {
  return Request("tools/call", {{"name", name}, {"arguments", std::move(arguments)}});
}

int StdioClient::Stop() {
  if (pid_ <= 0) return -1;
  if (to_server_ >= 0) close(to_server_);
  to_server_ = -1;
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  if (from_server_ >= 0) close(from_server_);
  from_server_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace mt::mcp
