// Real MCP clients against mt's servers: the official TypeScript SDK v1 client
// (@modelcontextprotocol/sdk, legacy era) and the v2 client (@modelcontextprotocol/client,
// 2026-07-28), over stdio and Streamable HTTP.
//
//   node sdk_clients.mjs --stdio "<cmd> <args…>" | --http URL
//                        --tool NAME [--args JSON] [--expect TEXT] [--elicit]
//
// For each client/era it connects, lists tools, calls --tool and checks that the result is
// not an error and contains --expect. With --elicit the tool asks the user (legacy:
// elicitation/create request; modern: input_required) and the client answers "accept".
// Prints one line per case and exits non-zero if any case failed.
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const stdioCmd = opt('--stdio');
const url = opt('--http');
const tool = opt('--tool');
const toolArgs = JSON.parse(opt('--args', '{}'));
const expect = opt('--expect', '');
const elicit = argv.includes('--elicit');
const modes = (opt('--modes', 'v1,v2-legacy,v2-modern')).split(',');

function transportFor(kind) {
  if (stdioCmd) {
    const [command, ...args] = stdioCmd.split(' ');
    const T = kind === 'v1' ? StdioV1 : StdioV2;
    return new T({ command, args, stderr: 'ignore' });
  }
  return kind === 'v1' ? new HttpV1(new URL(url)) : new HttpV2(new URL(url));
}

function textOf(result) {
  return (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

async function runCase(mode) {
  const caps = { capabilities: { elicitation: {} } };
  let client;
  if (mode === 'v1') client = new ClientV1({ name: 'mt-test-v1', version: '1.0.0' }, caps);
  else {
    const negotiation = mode === 'v2-modern' ? { mode: { pin: '2026-07-28' } } : { mode: 'legacy' };
    client = new ClientV2({ name: 'mt-test-v2', version: '1.0.0' }, { ...caps, versionNegotiation: negotiation });
  }
  let asked = 0;
  const answer = async () => {
    asked++;
    return { action: 'accept', content: { name: 'Alice', username: 'alice', email: 'a@example.com' } };
  };
  if (mode === 'v1') client.setRequestHandler(ElicitRequestSchema, answer);
  else client.setRequestHandler('elicitation/create', answer);

  await client.connect(transportFor(mode === 'v1' ? 'v1' : 'v2'));
  try {
    const era = mode === 'v1' ? 'legacy' : client.getProtocolEra();
    const listed = await client.listTools();
    const names = listed.tools.map((t) => t.name);
    if (!names.includes(tool)) throw new Error(`tool ${tool} not listed (got ${names.join(', ')})`);
    const result = await client.callTool({ name: tool, arguments: toolArgs });
    if (result.isError) throw new Error(`tool returned isError: ${textOf(result)}`);
    const text = textOf(result) + JSON.stringify(result.structuredContent ?? '');
    if (expect && !text.includes(expect)) throw new Error(`result lacks "${expect}": ${text.slice(0, 300)}`);
    if (elicit && asked === 0) throw new Error('the server never asked the client for input');
    return `era=${era} tools=${names.length} called=${tool}${elicit ? ` asked=${asked}` : ''}`;
  } finally {
    await client.close();
  }
}

let failed = 0;
for (const mode of modes) {
  const where = stdioCmd ? 'stdio' : 'http';
  try {
    const info = await Promise.race([
      runCase(mode),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timed out after 30 s')), 30000)),
    ]);
    console.log(`ok   ${where} ${mode}: ${info}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${where} ${mode}: ${e.message}`);
  }
}
process.exit(failed ? 1 : 0);
