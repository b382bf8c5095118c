// The fixture tools, resources and prompts the official MCP conformance suite calls by
// name. They live only in mt-conformance-server, never in the product's tool list.
#pragma once
#include "mcp/registry.h"

namespace mt::conformance {

void RegisterFixtures(mcp::Registry& registry);

}  // namespace mt::conformance
