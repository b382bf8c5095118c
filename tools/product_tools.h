// Registers mt's product tools (and later its skills as prompts/resources) in an MCP
// registry. `mt serve` calls this; tests call it to get the same catalogue.
#pragma once
#include <filesystem>

#include "mcp/registry.h"
#include "tools/approval_gate.h"

namespace mt::tools {

struct ProductOptions {
  std::filesystem::path workspace;   // the job output directory tree (absolute)
  // submit_job / cancel_job: the approvals store, audit log and CI policy (empty paths
  // default under the workspace), and whether clients may ask their user in-band.
  ApprovalEnv approvals = {};
  bool in_band_approval = true;
};

void RegisterProductTools(mcp::Registry& registry, const ProductOptions& options);

}  // namespace mt::tools
