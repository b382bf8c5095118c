// Drives mt's /approvals page in real headless Chromium over the DevTools protocol (Node 22's
// built-in WebSocket; no extra packages): open the page, log in with an approver token,
// check that plan PLAN is listed with its details, press its Approve button, and report
// what the page then shows for it.
//   node approval_page_chromium.mjs --base http://127.0.0.1:PORT --token SECRET --plan ID
//        [--decision approve|deny]
// Prints one JSON line {listed, login_ok, state, job, flash} and exits 0; 1 on failure.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const base = opt('--base');
const token = opt('--token');
const plan = opt('--plan');
const decision = opt('--decision', 'approve');

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const profile = mkdtempSync(join(tmpdir(), 'mt-chromium-'));
const port = await freePort();
const browser = spawn('chromium', ['--headless', '--no-sandbox', '--disable-gpu', `--remote-debugging-port=${port}`,
  `--user-data-dir=${profile}`, '--no-first-run', 'about:blank'], { stdio: 'ignore' });
let finished = false;
const done = (code, out) => {
  if (finished) return;
  finished = true;
  if (out) console.log(JSON.stringify(out));
  browser.kill('SIGKILL');
  // Chromium may still be writing its profile as it dies: remove it once it has exited.
  const clean = () => {
    try { rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }); } catch { /* a temp dir */ }
    process.exit(code);
  };
  if (browser.exitCode !== null || browser.signalCode !== null) clean();
  else browser.once('exit', clean);
};
setTimeout(() => done(1, { error: 'timed out after 60 s' }), 60000);

let target;
for (let i = 0; i < 100 && !target; i++) {
  try {
    const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
    target = list.find((t) => t.type === 'page');
  } catch { /* not up yet */ }
  if (!target) await sleep(100);
}
if (!target) done(1, { error: 'chromium did not start' });

const ws = new WebSocket(target.webSocketDebuggerUrl);
await new Promise((r, j) => { ws.onopen = r; ws.onerror = j; });
let seq = 0;
const pending = new Map();
const waiters = [];
ws.onmessage = (m) => {
  const msg = JSON.parse(m.data);
  if (msg.id && pending.has(msg.id)) {
    pending.get(msg.id)(msg);
    pending.delete(msg.id);
  } else if (msg.method) {
    for (const w of waiters.splice(0)) w(msg);
  }
};
const send = (method, params = {}) =>
  new Promise((resolve) => {
    const id = ++seq;
    pending.set(id, resolve);
    ws.send(JSON.stringify({ id, method, params }));
  });
const loaded = () =>
  new Promise((resolve) => {
    const wait = (msg) => (msg.method === 'Page.loadEventFired' ? resolve() : waiters.push(wait));
    waiters.push(wait);
  });
const evaluate = async (expr) => {
  const r = await send('Runtime.evaluate', { expression: expr, returnByValue: true });
  if (r.result?.exceptionDetails) throw new Error(`page script failed: ${expr}`);
  return r.result?.result?.value;
};

try {
  await send('Page.enable');
  await send('Runtime.enable');
  let load = loaded();
  await send('Page.navigate', { url: `${base}/approvals` });
  await load;
  const before = await evaluate(`document.getElementById('plan-${plan}') !== null`);
  load = loaded();
  await evaluate(`document.getElementById('token').value = ${JSON.stringify(token)}; document.getElementById('login').click(); true`);
  await load;
  const who = await evaluate(`(document.getElementById('who') || {}).textContent || null`);
  const listed = await evaluate(`(() => { const s = document.getElementById('plan-${plan}'); return s ? s.textContent : null; })()`);
  if (!listed) done(1, { error: 'plan not listed after login', who, before, page: await evaluate('document.body.innerText') });
  load = loaded();
  await evaluate(`document.getElementById('${decision}-${plan}').click(); true`);
  await load;
  const row = await evaluate(`(() => { const r = document.getElementById('done-${plan}'); return r ? { state: r.querySelector('.state').textContent, job: r.querySelector('.job').textContent } : null; })()`);
  const flash = await evaluate(`(document.getElementById('flash') || {}).textContent || null`);
  const still = await evaluate(`document.getElementById('plan-${plan}') !== null`);
  done(row ? 0 : 1, { listed_before_login: before, who, listed: listed.slice(0, 400), state: row?.state ?? null, job: row?.job ?? null, flash, still_pending: still });
} catch (e) {
  done(1, { error: String(e?.message ?? e) });
}
