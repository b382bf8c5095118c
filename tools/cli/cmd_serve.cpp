// mt serve: the MCP server. stdio by default (Claude Code, Cursor); --http ADDR for
// Streamable HTTP (remote agents); both at once when --stdio and --http are given.
#include <openssl/crypto.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "base/sha256.h"
#include "mcp/base64.h"
#include "mcp/http_transport.h"
#include "mcp/server.h"
#include "mcp/signals.h"
#include "mcp/stdio_transport.h"
#include "tools/gate/approval_page.h"
#include "tools/cli/command.h"
#include "tools/cli/flags.h"
#include "tools/catalog/config.h"
#include "tools/catalog/product_tools.h"
#include "tools/catalog/report_routes.h"
#include "tools/tsdb/tsdb_manager.h"

namespace mt::tools::cli {

namespace {

constexpr const char* kInstructions =
    "mt diagnoses LLM-training jobs (MaxText on Slurm) from their job output directory and "
    "Prometheus TSDB. Start with list_jobs, then triage_log on the job in question; its "
    "next_steps name the tool to call next. Every answer cites files and line numbers.";

bool IsLoopback(const std::string& host) { return host == "127.0.0.1" || host == "localhost" || host == "::1"; }

bool ParseAddr(const std::string& addr, std::string* host, int* port) {
  size_t colon = addr.rfind(':');
  if (colon == std::string::npos) return false;
  *host = addr.substr(0, colon);
  if (host->size() > 2 && host->front() == '[' && host->back() == ']') *host = host->substr(1, host->size() - 2);
  try {
    size_t used = 0;
    *port = std::stoi(addr.substr(colon + 1), &used);
    return used == addr.size() - colon - 1 && *port >= 0 && *port < 65536 && !host->empty();
  } catch (const std::exception&) {
    return false;
  }
}

ProductOptions ProductOptionsFrom(const Config& config) {
  ProductOptions product{config.workspace};
  product.approvals = ApprovalEnvFrom(config);
  product.in_band_approval = config.approval_in_band;
  product.approval_page_url = config.approval_page_url;
  product.approval_url_wait = std::chrono::seconds(config.approval_url_wait_seconds);
  product.metrics_sources = config.metrics_sources;
  product.webhooks = config.webhooks;
  return product;
}

// The protocol layer's options; false (said on stderr) when the state key file is unusable.
bool ServerOptionsFrom(const Config& config, const ProductOptions& product, mcp::ServerOptions* server_opts) {
  if (!config.state_key_file.empty()) {
    // A shared key lets a 2026-07-28 requestState survive a restart (and several servers).
    std::ifstream key_in(config.state_key_file, std::ios::binary);
    std::stringstream key;
    key << key_in.rdbuf();
    if (!key_in || key.str().size() < 32) {
      std::cerr << "mt serve: approvals.state_key_file " << config.state_key_file.string()
                << " must be readable and hold at least 32 bytes\n";
      return false;
    }
    server_opts->request_state_key = key.str();
  }
  // Refusals the protocol layer makes before a tool runs (a tampered or replayed requestState,
  // an invented tool such as "approve") go to the approval audit log like the gate's own.
  server_opts->on_refusal = [env = product.approvals](const mcp::Principal& who, const std::string& method,
                                                       const std::string& name, const std::string& reason) {
    (void)AuditEvent(env, "refused", "", Actor{who.name, who.role}, {{"action", method + " " + name}, {"reason", reason}});
  };
  return true;
}

// Bearer tokens, compared by their SHA-256 in constant time.
auto TokenAuthenticator(const Config& config) {
  auto tokens = config.tokens;
  return [tokens](const std::string& secret) -> std::optional<mcp::Principal> {
    std::string digest = base::Sha256Hex(secret);
    for (const auto& t : tokens)
      if (CRYPTO_memcmp(digest.data(), t.sha256_hex.data(), digest.size()) == 0)
        return mcp::Principal{t.name, t.role, true};
    return std::nullopt;
  };
}

// The HTTP transport's options for --http ADDR; an exit code when the address is malformed
// or would be served without authentication.
std::optional<int> HttpOptionsFrom(const Config& config, const ProductOptions& product, const std::string& http_addr,
                                   mcp::HttpOptions* out) {
  mcp::HttpOptions& opts = *out;
  if (!ParseAddr(http_addr, &opts.host, &opts.port)) {
    std::cerr << "mt serve: --http needs HOST:PORT (e.g. 127.0.0.1:8765), got '" << http_addr << "'\n";
    return kExitUsage;
  }
  if (config.tokens.empty() && !IsLoopback(opts.host)) {
    std::cerr << "mt serve: refusing to serve " << opts.host
              << " without authentication; add tokens to " << (config.source.empty() ? "configs/mt.yaml" : config.source.string())
              << " or bind 127.0.0.1\n";
    return kExitUsage;
  }
  opts.allowed_origins = config.allowed_origins;
  opts.allowed_hosts = config.allowed_hosts;
  if (!IsLoopback(opts.host)) opts.allowed_hosts.push_back(opts.host);
  opts.max_body_bytes = config.max_body_bytes;
  opts.connections.header_timeout = std::chrono::seconds(config.header_timeout_seconds);
  opts.connections.body_timeout = std::chrono::seconds(config.body_timeout_seconds);
  opts.connections.idle_timeout = std::chrono::seconds(config.idle_timeout_seconds);
  opts.connections.max_per_client = config.max_connections_per_client;
  if (!config.tokens.empty()) opts.authenticate = TokenAuthenticator(config);
  for (auto& route : ReportPageRoutes(config.workspace, opts.authenticate)) opts.pages.push_back(std::move(route));
  for (auto& page : ApprovalPages(product.approvals, opts.authenticate)) opts.pages.push_back(std::move(page));
  return std::nullopt;
}

// Binds the HTTP port; URL-mode approvals then send the user to this server's own page
// unless the operator named one.
bool BindHttp(mcp::HttpTransport& http, const std::string& http_addr, ProductOptions& product) {
  std::string err;
  if (!http.Bind(&err)) {
    std::cerr << "mt serve: " << err << "\n";
    return false;
  }
  if (product.approval_page_url.empty()) {
    std::string host = http_addr.substr(0, http_addr.rfind(':'));
    if (host == "0.0.0.0" || host == "[::]" || host.empty()) host = "127.0.0.1";
    product.approval_page_url = "http://" + host + ":" + std::to_string(http.port()) + "/approvals";
  }
  return true;
}

}  // namespace

int RunServe(const std::vector<std::string>& args) {
  Flags flags(args, {"http", "workspace", "config"}, {"stdio"});
  if (!flags.ok() || !flags.positional().empty()) {
    std::cerr << "mt serve: " << (flags.ok() ? "unexpected argument " + flags.positional()[0] : flags.error())
              << "\nusage: mt serve [--stdio] [--http ADDR] [--workspace DIR] [--config FILE]\n";
    return kExitUsage;
  }
  Config config;
  try {
    config = ResolveConfig(flags.value("config"), flags.value("workspace"));
  } catch (const std::exception& e) {
    std::cerr << "mt serve: " << e.what() << "\n";
    return kExitFailed;
  }
  if (std::string why = CheckPrivilegedSettings(config); !why.empty()) {
    std::cerr << "mt serve: " << why << "\n";
    return kExitFailed;
  }
  std::string http_addr = flags.value("http").value_or("");
  bool use_stdio = flags.has("stdio") || http_addr.empty();

  auto registry = std::make_shared<mcp::Registry>();
  ProductOptions product = ProductOptionsFrom(config);
  mcp::ServerOptions server_opts;
  if (!ServerOptionsFrom(config, product, &server_opts)) return kExitFailed;
  mcp::Server server(mcp::ServerInfo{"mt", "mt — training-job diagnostics", "0.1.0", kInstructions}, registry, server_opts);

  std::unique_ptr<mcp::HttpTransport> http;
  if (!http_addr.empty()) {
    mcp::HttpOptions opts;
    if (std::optional<int> code = HttpOptionsFrom(config, product, http_addr, &opts)) return *code;
    http = std::make_unique<mcp::HttpTransport>(server, opts);
  }

  mcp::StopOnSignals([&http, use_stdio] {
    if (http) http->Stop();
    // stdio ends at EOF; a signal while blocked reading stdin ends the process, after
    // stopping the Prometheus instances query_tsdb started (and their private copies).
    if (use_stdio) {
      DefaultTsdbManager().StopAll();
      RemovePrivateTsdbCopies();   // lock-free: also when StopAll could not finish
      std::_Exit(0);
    }
  });
  std::thread http_thread;
  if (http && !BindHttp(*http, http_addr, product)) return kExitFailed;
  // Registered once the page URL is known (tools copy their options); nothing is served yet.
  RegisterProductTools(*registry, product);
  if (http) {
    std::cerr << "mt serve: listening on http://" << http_addr.substr(0, http_addr.rfind(':')) << ":" << http->port()
              << "/mcp (workspace " << config.workspace.string() << ")\n";
    if (!use_stdio) {
      http->Serve();
      return kExitOk;
    }
    http_thread = std::thread([&http] { http->Serve(); });
  }
  mcp::StdioOptions stdio_opts;
  // The stdio client's role is the operator's decision, written in the config file, never
  // the environment an agent might spawn `mt serve` with.
  stdio_opts.principal.role = config.stdio_role;
  int rc = mcp::StdioTransport(server, stdio_opts).Run();
  if (http) {
    http->Stop();
    http_thread.join();
  }
  return rc == 0 ? kExitOk : kExitFailed;
}

}  // namespace mt::tools::cli
