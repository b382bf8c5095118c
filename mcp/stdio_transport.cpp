#include "mcp/stdio_transport.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <iostream>
#include <string>

#include "mcp/json_parse.h"
#include "mcp/worker_pool.h"

namespace mt::mcp {

class StdioTransport::OutChannel : public Channel {
 public:
  explicit OutChannel(StdioTransport& t) : t_(t) {}
  bool CanSend() const override { return !t_.output_broken_.load(); }
  bool Send(const Json& message) override { return t_.Write(message); }
  // After EOF nobody can answer a server→client request any more.
  bool Closed() const override { return t_.eof_.load() || t_.output_broken_.load(); }
  bool CloseCancels() const override { return false; }

 private:
  StdioTransport& t_;
};

StdioTransport::StdioTransport(Server& server, StdioOptions options)
    : server_(server),
      options_(std::move(options)),
      session_(std::make_shared<LegacySession>("stdio")),
      channel_(std::make_unique<OutChannel>(*this)) {
  session_->SetNotifier([this](const Json& m) { return Write(m); });
  server_.Attach(session_);
}

StdioTransport::~StdioTransport() { server_.Detach(session_.get()); }

bool StdioTransport::Write(const Json& message) {
  std::string line = message.dump(-1, ' ', false, Json::error_handler_t::replace);
  line.push_back('\n');
  return WriteRaw(line);
}

void StdioTransport::Queue(const Json& message) {
  pending_ += message.dump(-1, ' ', false, Json::error_handler_t::replace);
  pending_.push_back('\n');
}

void StdioTransport::Flush() {
  if (pending_.empty()) return;
  WriteRaw(pending_);
  pending_.clear();
}

bool StdioTransport::WriteRaw(const std::string& bytes) {
  if (output_broken_.load()) return false;
  std::lock_guard lock(write_mu_);
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(options_.out_fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      output_broken_.store(true);
      return false;
    }
    p += n;
    left -= size_t(n);
  }
  return true;
}

void StdioTransport::HandleLine(const char* begin, const char* end) {
  while (begin < end && (*begin == ' ' || *begin == '\t' || *begin == '\r')) ++begin;
  while (end > begin && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) --end;
  if (begin == end) return;
  JsonParseResult parsed = ParseUntrustedJson(std::string_view(begin, size_t(end - begin)),
                                                JsonLimits{options_.max_line_bytes, options_.max_json_depth});
  if (!parsed.ok()) {
    Queue(MakeError(nullptr, RpcError(kParseError, "parse error: the line is " + parsed.error)));
    return;
  }
  Json raw = std::move(parsed.value);
  Json id;
  Message m;
  try {
    m = server_.Decode(std::move(raw), &id);
  } catch (const RpcError& e) {
    Queue(MakeError(id, e));
    return;
  }
  RequestEnv env;
  env.session = session_.get();
  env.in_flight = &session_->in_flight();
  env.channel = channel_.get();
  env.principal = options_.principal;
  if (m.kind != MessageKind::kRequest) {
    server_.Accept(m, env);
    return;
  }
  try {
    server_.Admit(m, env);
  } catch (const RpcError& e) {
    Queue(MakeError(m.id, e));
    return;
  }
  if (server_.IsQuick(m)) {
    // Nothing can cancel it: the reader is busy running it. Messages it sends (none for
    // quick tools) go out before the batched replies.
    env.in_flight = nullptr;
    if (auto reply = server_.Dispatch(m, env)) Queue(*reply);
    return;
  }
  Flush();   // keep replies in order with respect to anything the worker writes
  env.cancel = session_->in_flight().Begin(m.id);
  pool_->Submit([this, m = std::move(m), env = std::move(env)]() mutable {
    if (auto reply = server_.Dispatch(m, env)) Write(*reply);
  });
}

int StdioTransport::Run() {
  WorkerPool pool;
  pool_ = &pool;
  std::string buf;
  buf.reserve(1 << 16);
  bool discarding = false;   // inside an over-long line: skip to its end
  size_t scanned = 0;        // bytes of buf already searched for '\n'
  char chunk[1 << 16];
  int rc = 0;
  for (;;) {
    ssize_t n = ::read(options_.in_fd, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::cerr << "mt: stdin read error: " << strerror(errno) << "\n";
      rc = 1;
      break;
    }
    if (n == 0) break;
    buf.append(chunk, size_t(n));
    size_t start = 0;
    for (;;) {
      const char* nl = static_cast<const char*>(memchr(buf.data() + scanned, '\n', buf.size() - scanned));
      if (!nl) break;
      size_t end = size_t(nl - buf.data());
      if (discarding) {
        discarding = false;
      } else {
        HandleLine(buf.data() + start, buf.data() + end);
      }
      start = end + 1;
      scanned = start;
    }
    Flush();
    buf.erase(0, start);
    scanned = buf.size();
    if (buf.size() > options_.max_line_bytes) {
      if (!discarding) {
        Queue(MakeError(nullptr, RpcError(kParseError, "parse error: line longer than " +
                                                           std::to_string(options_.max_line_bytes) + " bytes")));
      }
      discarding = true;
      buf.clear();
      scanned = 0;
    }
  }
  if (!discarding && !buf.empty()) HandleLine(buf.data(), buf.data() + buf.size());
  Flush();
  eof_.store(true);
  pool.Drain();   // answer everything already read
  pool_ = nullptr;
  return rc;
}

}  // namespace mt::mcp
