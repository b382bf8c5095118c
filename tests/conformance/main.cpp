// mt-conformance-server: mt's protocol core serving the conformance suite's fixtures over
// Streamable HTTP at /mcp. A test target only; never part of the product.
//   mt-conformance-server --listen 127.0.0.1:PORT   (Streamable HTTP)
//   mt-conformance-server --stdio                   (the same fixtures over stdio)
//   --token NAME=SECRET (repeatable): HTTP requests need `Authorization: Bearer SECRET` and
//   run as principal NAME (tests of per-principal state, such as task ownership).
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "mcp/http_transport.h"
#include "mcp/server.h"
#include "mcp/signals.h"
#include "mcp/stdio_transport.h"
#include "tests/conformance/fixtures.h"

int main(int argc, char** argv) {
  std::string listen = "127.0.0.1:0";
  bool stdio = false;
  std::map<std::string, std::string> tokens;   // secret → principal name
  for (int i = 1; i < argc; ++i) {
    const char* eq = i + 1 < argc ? std::strchr(argv[i + 1], '=') : nullptr;
    if (std::strcmp(argv[i], "--stdio") == 0) {
      stdio = true;
    } else if (std::strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
      listen = argv[++i];
    } else if (std::strcmp(argv[i], "--token") == 0 && eq && eq != argv[i + 1] && eq[1] != '\0') {
      tokens[eq + 1] = std::string(argv[i + 1], size_t(eq - argv[i + 1]));
      ++i;
    } else {
      std::cerr << "usage: mt-conformance-server [--token NAME=SECRET]... --listen HOST:PORT | --stdio\n";
      return 2;
    }
  }
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    std::cerr << "mt-conformance-server: --listen needs HOST:PORT\n";
    return 2;
  }
  mt::mcp::HttpOptions opts;
  opts.host = listen.substr(0, colon);
  opts.port = std::atoi(listen.c_str() + colon + 1);
  if (!tokens.empty()) {
    opts.authenticate = [tokens](const std::string& secret) -> std::optional<mt::mcp::Principal> {
      auto it = tokens.find(secret);
      if (it == tokens.end()) return std::nullopt;
      return mt::mcp::Principal{it->second, "agent", true};
    };
  }

  auto registry = std::make_shared<mt::mcp::Registry>();
  mt::conformance::RegisterFixtures(*registry);
  mt::mcp::ServerInfo info{"mt-conformance-server", "mt conformance fixture", "0.1.0",
                           "Fixture server for the official MCP conformance suite."};
  mt::mcp::Server server(info, registry);
  if (stdio) return mt::mcp::StdioTransport(server).Run();
  mt::mcp::HttpTransport http(server, opts);
  mt::mcp::StopOnSignals([&http] { http.Stop(); });
  std::string err;
  if (!http.Bind(&err)) {
    std::cerr << "mt-conformance-server: " << err << "\n";
    return 1;
  }
  std::cerr << "mt-conformance-server: listening on http://" << opts.host << ":" << http.port() << "/mcp\n";
  http.Serve();
  return 0;
}
