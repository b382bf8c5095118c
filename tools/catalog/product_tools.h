// Registers mt's product tools (and later its skills as prompts/resources) in an MCP
// registry. `mt serve` calls this; tests call it to get the same catalogue.
#pragma once
#include <chrono>
#include <filesystem>
#include <string>

#include "mcp/registry.h"
#include "tools/gate/approval_gate.h"
#include "tools/catalog/config.h"

namespace mt::tools {

struct ProductOptions {
  std::filesystem::path workspace;   // the job output directory tree (absolute)
  // submit_job / cancel_job: the approvals store, audit log and CI policy (empty paths
  // default under the workspace), how clients may involve their user (tools/catalog/config.h), and
  // the /approvals page URL-mode elicitation sends the user to (empty: no URL mode).
  ApprovalEnv approvals = {};
  InBandApproval in_band_approval = InBandApproval::kUrl;
  std::string approval_page_url = {};
  std::chrono::milliseconds approval_url_wait{std::chrono::seconds(45)};   // URL mode: wait for the human
  std::vector<MetricsSource> metrics_sources = {};   // query_tsdb's `source` (mt.yaml metrics.sources)
  std::vector<Webhook> webhooks = {};                // watch_job's notices (mt.yaml notifications.webhooks)
};

void RegisterProductTools(mcp::Registry& registry, const ProductOptions& options);

}  // namespace mt::tools
