// The Tasks extension from a real SDK client: the TypeScript v2 client
// (@modelcontextprotocol/client) with the official Tasks requester
// (@modelcontextprotocol/ext-tasks) over Streamable HTTP, 2026-07-28.
//
//   node tasks_client.mjs --http URL [--token SECRET]
//
// Against mt-conformance-server: slow_compute runs as a task to completion (the result is
// fetched after it finished), another is cancelled while it runs, and confirm_delete asks
// the user inside its task (answered through tasks/update by the requester's input
// handler). The ext-tasks requester needs the host to carry its 2026-07-28 requests
// (rawDispatch): here a plain fetch with the routing headers. Prints one line per case and
// exits non-zero if any failed.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { makeRawDispatch } from './raw_dispatch.mjs';

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const url = opt('--http');
const token = opt('--token');
const VERSION = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const clientInfo = { name: 'mt-tasks-client', version: '1.0.0' };
const clientCapabilities = { elicitation: {}, extensions: { [TASKS]: {} } };
const auth = token ? { Authorization: `Bearer ${token}` } : {};

const rawDispatch = makeRawDispatch({ url, auth, version: VERSION, idPrefix: 'tasks' });

function textOf(result) {
  return (result?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

async function withSession(fn) {
  const client = new Client(clientInfo, { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: VERSION } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: auth } }));
  let asked = 0;
  const session = createTaskSessionFromClient(client, {
    endpointId: 'mt-conformance-server',
    rawDispatch,
    v2RequestFraming: { protocolVersion: VERSION, clientInfo, clientCapabilities },
    onInputRequest: async (request) => {
      asked++;
      if (request.kind !== 'elicitation') throw new Error(`unexpected input request ${request.kind}`);
      return { action: 'accept', content: { confirm: true } };
    },
  });
  try {
    return await fn(session, () => asked);
  } finally {
    await session.close();
    await client.close();
  }
}

const cases = {
  'task runs to completion, result fetched afterwards': (session) => async () => {
    const execution = await session.callTool('slow_compute', { seconds: 1, label: 'sdk' });
    if (execution.kind !== 'task') throw new Error(`expected a task, got ${execution.kind}`);
    const { outcome, lastTask } = await execution.settle();
    const result = resultFromTaskOutcome(outcome);
    if (!textOf(result).includes('slow_compute sdk finished')) throw new Error(`result: ${JSON.stringify(result)}`);
    return `task ${execution.handle.taskId.slice(0, 8)}… ${outcome.status}, statusMessage "${lastTask?.statusMessage ?? ''}"`;
  },
  'task cancelled while it runs': (session) => async () => {
    const execution = await session.callTool('slow_compute', { seconds: 60, label: 'to-cancel' });
    if (execution.kind !== 'task') throw new Error(`expected a task, got ${execution.kind}`);
    await execution.cancel();
    const { outcome } = await execution.settle();
    if (outcome.status !== 'cancelled') throw new Error(`outcome ${outcome.status}`);
    return `task ${execution.handle.taskId.slice(0, 8)}… cancelled`;
  },
  'question inside a task answered with tasks/update': (session, asked) => async () => {
    const execution = await session.callTool('confirm_delete', { filename: 'old.ckpt' });
    if (execution.kind !== 'task') throw new Error(`expected a task, got ${execution.kind}`);
    const { outcome } = await execution.settle();
    const text = textOf(resultFromTaskOutcome(outcome));
    if (text !== 'Deleted old.ckpt' || asked() !== 1) throw new Error(`result "${text}", asked ${asked()} times`);
    return `"${text}" after 1 question`;
  },
};

let failed = 0;
for (const [name, make] of Object.entries(cases)) {
  try {
    const info = await Promise.race([
      withSession((session, asked) => make(session, asked)()),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timed out after 30 s')), 30000)),
    ]);
    console.log(`ok   tasks ${name}: ${info}`);
  } catch (e) {
    failed++;
    console.log(`FAIL tasks ${name}: ${e.stack ?? e.message}`);
  }
}
process.exit(failed ? 1 : 0);
