// Who is calling: from a bearer token on HTTP, from the environment on stdio.
#pragma once
#include <string>

namespace mt::mcp {

struct Principal {
  std::string name = "anonymous";   // token name, or "stdio"
  std::string role = "agent";       // agent | approver | ci
  bool authenticated = false;
};

}  // namespace mt::mcp
