// The raw 2026-07-28 request path the ext-tasks requester needs from its host (rawDispatch):
// frames the JSON-RPC envelope and the routing headers, POSTs to the Streamable HTTP
// endpoint, and reads a JSON or SSE answer. Shared by the task clients of the tests.
export function makeRawDispatch({ url, auth = {}, version = '2026-07-28', idPrefix = 'tasks' }) {
  let nextId = 1;
  return async function rawDispatch(request, options = {}) {
    const params = request.params ?? {};
    const name = params.name ?? params.uri ?? params.taskId;
    const headers = {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': version,
      'Mcp-Method': request.method,
      ...(typeof name === 'string' ? { 'Mcp-Name': name } : {}),
      ...(options.context?.headers ?? {}),
      ...auth,
    };
    const body = JSON.stringify({ jsonrpc: '2.0', id: `${idPrefix}-${nextId++}`, ...request });
    const res = await fetch(url, { method: 'POST', headers, body, signal: options.signal });
    const text = await res.text();
    let message;
    if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) {
      for (const line of text.split(/\r?\n/)) {
        if (!line.startsWith('data:')) continue;
        const m = JSON.parse(line.slice(5));
        if ('result' in m || 'error' in m) message = m;
      }
    } else {
      message = JSON.parse(text);
    }
    if (!message) throw new Error(`HTTP ${res.status}: no JSON-RPC response`);
    return message.error ? { kind: 'error', error: message.error } : { kind: 'result', result: message.result };
  };
}
