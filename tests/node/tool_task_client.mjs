// A long tool (run_sweep, watch_job) as an MCP task from the official TypeScript requester
// (@modelcontextprotocol/client v2 + @modelcontextprotocol/ext-tasks) over Streamable HTTP,
// 2026-07-28.
//
//   node tool_task_client.mjs --http URL --token SECRET --tool NAME --args JSON (--complete | --cancel-when TEXT)
//
// --complete: the tool runs as a task to its end; prints the progress lines seen while
//   polling and the result fetched after completion as one JSON line (RESULT {...}).
// --cancel-when TEXT: cancels the task once its status contains TEXT; prints the progress
//   seen and the outcome (OUTCOME cancelled).
// Exits non-zero when the server does not answer with a task or the outcome is not the
// expected one.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { makeRawDispatch } from './raw_dispatch.mjs';

const argv = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const url = opt('--http');
const token = opt('--token');
const tool = opt('--tool');
const args = JSON.parse(opt('--args') ?? '{}');
const cancelWhen = opt('--cancel-when');
const cancel = cancelWhen !== undefined;
const VERSION = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const clientInfo = { name: 'mt-tool-task-client', version: '1.0.0' };
const clientCapabilities = { extensions: { [TASKS]: {} } };
const auth = { Authorization: `Bearer ${token}` };

const rawDispatch = makeRawDispatch({ url, auth, version: VERSION, idPrefix: 'task' });

// tasks/get through the same raw path: the status message is the tool's latest progress line.
async function statusOf(taskId) {
  const r = await rawDispatch({
    method: 'tasks/get',
    params: { taskId, _meta: { 'io.modelcontextprotocol/protocolVersion': VERSION, 'io.modelcontextprotocol/clientCapabilities': clientCapabilities } },
  });
  if (r.kind === 'error') throw new Error(`tasks/get: ${JSON.stringify(r.error)}`);
  return r.result;
}

const client = new Client(clientInfo, { capabilities: {}, versionNegotiation: { mode: { pin: VERSION } } });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: auth } }));
const session = createTaskSessionFromClient(client, {
  endpointId: 'mt-serve',
  rawDispatch,
  v2RequestFraming: { protocolVersion: VERSION, clientInfo, clientCapabilities },
  onInputRequest: async (request) => {
    throw new Error(`${tool} asked the client (${request.kind}): it must never need the agent's answer`);
  },
});
let rc = 0;
try {
  const execution = await session.callTool(tool, args);
  if (execution.kind !== 'task') throw new Error(`expected a task, got ${execution.kind}: ${JSON.stringify(execution)}`);
  const id = execution.handle.taskId;
  console.log(`TASK ${id.slice(0, 8)}…`);
  const seen = [];
  const deadline = Date.now() + 400_000;
  for (;;) {
    const t = await statusOf(id);
    if (t.statusMessage && seen[seen.length - 1] !== t.statusMessage) {
      seen.push(t.statusMessage);
      console.log(`PROGRESS ${t.statusMessage}`);
    }
    if (t.status !== 'working') break;
    if (cancel && seen.some((m) => m.includes(cancelWhen))) {
      await execution.cancel();
      break;
    }
    if (Date.now() > deadline) throw new Error('the task did not finish in 400 s');
    await new Promise((r) => setTimeout(r, 250));
  }
  const { outcome } = await execution.settle();
  console.log(`OUTCOME ${outcome.status}`);
  if (cancel) {
    if (outcome.status !== 'cancelled') throw new Error(`expected cancelled, got ${outcome.status}`);
  } else {
    if (outcome.status !== 'completed') throw new Error(`expected completed, got ${JSON.stringify(outcome)}`);
    if (!seen.length) throw new Error('no progress seen while the task ran');
    const result = resultFromTaskOutcome(outcome);
    console.log(`RESULT ${JSON.stringify(result.structuredContent)}`);
  }
} catch (e) {
  console.log(`FAIL ${e.stack ?? e.message}`);
  rc = 1;
} finally {
  await session.close();
  await client.close();
}
process.exit(rc);
