// The peer for mt's protocol benchmarks: the official TypeScript SDK server (v1,
// @modelcontextprotocol/sdk) with the same trivial tool mt's fixture server has
// (test_simple_text), over stdio or Streamable HTTP in its default mode (sessions, SSE
// responses).
//   node sdk_server.mjs stdio
//   node sdk_server.mjs http PORT
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

function makeServer() {
  const server = new McpServer({ name: 'sdk-peer', version: '1.0.0' });
  server.registerTool('test_simple_text', { description: 'Returns a simple text response' }, async () => ({
    content: [{ type: 'text', text: 'This is a simple text response for testing.' }],
  }));
  return server;
}

const [mode, port] = process.argv.slice(2);
if (mode === 'stdio') {
  await makeServer().connect(new StdioServerTransport());
} else {
  const transports = {};
  http
    .createServer(async (req, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      const parsed = body ? JSON.parse(body) : undefined;
      const sid = req.headers['mcp-session-id'];
      let transport = sid && transports[sid];
      if (!transport && req.method === 'POST' && isInitializeRequest(parsed)) {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => (transports[id] = transport),
        });
        await makeServer().connect(transport);
      }
      if (!transport) {
        res.writeHead(400).end('no session');
        return;
      }
      await transport.handleRequest(req, res, parsed);
    })
    .listen(Number(port), '127.0.0.1', () => console.error(`sdk-peer listening on ${port}`));
}
