// Real SDK clients calling mt's gated tools (submit_job / cancel_job) over stdio:
//   node approval_clients.mjs (--stdio "<cmd> <args…>" | --http URL [--token SECRET])
//                             --mode MODE --tool NAME --args JSON
// MODE:
//   v1-accept      SDK v1 client (legacy era) that declares elicitation and, when the server's
//                  elicitation/create arrives, answers accept + approve for the plan shown
//   modern-accept  v2 client pinned to 2026-07-28: the server answers input_required, the
//                  client's elicitation handler approves, the SDK retries with the state
//   v1-decline     v1 client that declares elicitation and declines
//   no-elicit      v1 client without the elicitation capability
//   v1-url         v1 client that declares URL-mode elicitation and accepts every request
//                  (it "opens the page") without anyone deciding there
//   v1-url-human   like v1-url, but a human acts on the plan first: `--human "CMD"` is run
//                  with the plan id appended (e.g. "mt approve --yes --workspace WS")
// The server process inherits this process's environment (SLURM_CONF, MT_JOB_BIN, …).
// Prints the tool's structuredContent as one JSON line (plus `asked`: how many forms the
// client was shown) and exits 0; exits 1 on a protocol failure or a tool error.
import { execFileSync } from 'node:child_process';
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
const stdio = opt('--stdio');
const [command, ...args] = (stdio ?? '').split(' ');
const url = opt('--http');
const token = opt('--token');
const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
const mode = opt('--mode', 'v1-accept');
const tool = opt('--tool', 'submit_job');
const toolArgs = JSON.parse(opt('--args', '{}'));
const human = opt('--human');
let urls = [];

let asked = 0;
const answer = async (request) => {
  asked++;
  const params = request.params ?? request;
  const plan = params.requestedSchema?.properties?.plan?.default;
  if (mode === 'v1-decline') return { action: 'decline' };
  if (params.mode === 'url') {
    urls.push(params.url);
    if (mode === 'v1-url-human') {
      const [cmd, ...cargs] = human.split(' ');
      execFileSync(cmd, [...cargs, params.elicitationId], { stdio: ['ignore', 'ignore', 'inherit'] });
    }
    return { action: 'accept' };
  }
  return { action: 'accept', content: { decision: 'approve', plan } };
};

const elicits = mode !== 'no-elicit';
const urlMode = mode.startsWith('v1-url');
const caps = { capabilities: elicits ? { elicitation: urlMode ? { form: {}, url: {} } : {} } : {} };
let client, transport;
if (mode === 'modern-accept') {
  client = new ClientV2({ name: 'mt-approval-v2', version: '1.0.0' }, { ...caps, versionNegotiation: { mode: { pin: '2026-07-28' } } });
  client.setRequestHandler('elicitation/create', answer);
  transport = url ? new HttpV2(new URL(url), { requestInit }) : new StdioV2({ command, args, env: process.env, stderr: 'inherit' });
} else {
  client = new ClientV1({ name: 'mt-approval-v1', version: '1.0.0' }, caps);
  if (elicits) client.setRequestHandler(ElicitRequestSchema, answer);
  transport = url ? new HttpV1(new URL(url), { requestInit }) : new StdioV1({ command, args, env: process.env, stderr: 'inherit' });
}

const timer = setTimeout(() => {
  console.error('timed out after 120 s');
  process.exit(1);
}, 120000);
try {
  await client.connect(transport);
  const result = await client.callTool({ name: tool, arguments: toolArgs });
  const text = (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  if (result.isError) {
    console.log(JSON.stringify({ isError: true, text, asked }));
    process.exitCode = 1;
  } else {
    const era = mode === 'modern-accept' ? client.getProtocolEra() : 'legacy';
    console.log(JSON.stringify({ ...result.structuredContent, asked, era, urls }));
  }
} catch (e) {
  console.log(JSON.stringify({ protocolError: String(e?.message ?? e), asked }));
  process.exitCode = 1;
} finally {
  clearTimeout(timer);
  await client.close();
}
