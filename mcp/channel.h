// The transport's side of one inbound request: how the dispatcher sends messages that
// belong to it before its response (progress, logs, server→client requests), and whether
// the peer is still there. stdio writes them to stdout; HTTP to the POST's SSE stream.
#pragma once
#include "mcp/json.h"

namespace mt::mcp {

class Channel {
 public:
  virtual ~Channel() = default;
  // True when messages can precede the response (SSE stream, stdio); false for a plain
  // JSON HTTP response.
  virtual bool CanSend() const = 0;
  // Sends one message; false if the peer is gone or sending is impossible.
  virtual bool Send(const Json& message) = 0;
  // True once the peer closed the stream (on HTTP that is the cancel signal).
  virtual bool Closed() const { return false; }
  // Whether a closed stream means the request is cancelled (HTTP: yes; stdio EOF: no,
  // pending requests still get their answers written).
  virtual bool CloseCancels() const { return true; }
};

// A channel that can carry nothing (plain JSON responses, tests).
class NullChannel : public Channel {
 public:
  bool CanSend() const override { return false; }
  bool Send(const Json&) override { return false; }
};

}  // namespace mt::mcp
