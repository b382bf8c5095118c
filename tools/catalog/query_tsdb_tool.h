// query_tsdb: a job's Prometheus TSDB turned into evidence (discover, promql, playbook,
// correlate), live or after the job ended. Schema and handler together; the CLI
// (`mt query`) calls QueryTsdbStructured directly.
#pragma once
#include <filesystem>

#include "mcp/registry.h"
#include "tools/catalog/product_tools.h"
#include "tools/tsdb/tsdb_manager.h"
#include "tools/logs/workspace.h"

namespace mt::mcp {
class CallContext;
}

namespace mt::tools {

mcp::Tool QueryTsdbTool(const std::filesystem::path& workspace, TsdbManager& manager);
// Registers query_tsdb on the process-wide DefaultTsdbManager().
void RegisterQueryTsdb(mcp::Registry& registry, const ProductOptions& options);

// Arguments already validated against the input schema; job resolved. Throws
// std::invalid_argument (bad or missing arguments), TsdbError (TSDB missing, empty,
// corrupt; Prometheus cannot start), PrometheusError (Prometheus's own message, e.g.
// bad_data for invalid PromQL). `call` may be null (CLI). `stats`, when given, receives
// {queries, raw_bytes (the Prometheus JSON the answer replaced), prometheus_started}.
Json QueryTsdbStructured(const JobFiles& job, const Json& arguments, TsdbManager& manager, mcp::CallContext* call,
                         Json* stats = nullptr);

// One short human line per finding plus the verdict, for the text content and the CLI.
std::string QueryTsdbText(const Json& structured);

}  // namespace mt::tools
