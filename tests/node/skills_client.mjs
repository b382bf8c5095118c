// Skills over MCP, seen by real clients: the TypeScript SDK v1 client (legacy era) and the v2
// client pinned to 2026-07-28, both over stdio against `mt serve`.
//
//   node skills_client.mjs --stdio "<cmd> <args…>" --skills a,b,c [--job ID]
//
// For each client it lists the prompts and checks that they are exactly --skills; gets every
// prompt with its required arguments (job-like ones = --job) and checks the text names the
// skill and carries the value; reads every skill://<name> resource and checks it is that
// skill's SKILL.md; asks completion/complete for a job argument. One line per case; exits
// non-zero if any failed.
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const [command, ...cmdArgs] = opt('--stdio').split(' ');
const expected = opt('--skills').split(',').sort();
const job = opt('--job', '7877');

function argumentValue(name) {
  return name === 'job' || name.startsWith('job_') ? job : `test-${name}`;
}

async function runCase(mode) {
  let client;
  if (mode === 'v1') client = new ClientV1({ name: 'mt-skills-v1', version: '1.0.0' });
  else client = new ClientV2({ name: 'mt-skills-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  const T = mode === 'v1' ? StdioV1 : StdioV2;
  await client.connect(new T({ command, args: cmdArgs, stderr: 'ignore' }));
  try {
    const prompts = (await client.listPrompts()).prompts;
    const names = prompts.map((p) => p.name).sort();
    if (JSON.stringify(names) !== JSON.stringify(expected))
      throw new Error(`prompts/list gave [${names}] but skills/ has [${expected}]`);
    let completed = 0;
    for (const p of prompts) {
      const args = {};
      for (const a of p.arguments ?? []) if (a.required) args[a.name] = argumentValue(a.name);
      const got = await client.getPrompt({ name: p.name, arguments: args });
      const text = got.messages.map((m) => m.content?.text ?? '').join('\n');
      if (!text.includes(`mt skill "${p.name}"`)) throw new Error(`prompt ${p.name}: text does not name the skill`);
      for (const [k, v] of Object.entries(args))
        if (!text.includes(`${k} = ${v}`)) throw new Error(`prompt ${p.name}: argument ${k} not carried`);
      if (!/## Workflow/.test(text)) throw new Error(`prompt ${p.name}: no Workflow section`);
      const jobArg = (p.arguments ?? []).find((a) => a.name === 'job' || a.name.startsWith('job_'));
      if (jobArg) {
        const c = await client.complete({ ref: { type: 'ref/prompt', name: p.name }, argument: { name: jobArg.name, value: job.slice(0, 2) } });
        if (!c.completion.values.includes(job)) throw new Error(`completion of ${p.name}.${jobArg.name} lacks ${job}: ${c.completion.values}`);
        completed++;
      }
    }
    const resources = (await client.listResources()).resources.filter((r) => r.uri.startsWith('skill://'));
    const uris = resources.map((r) => r.uri.slice('skill://'.length)).sort();
    if (JSON.stringify(uris) !== JSON.stringify(expected)) throw new Error(`skill:// resources [${uris}] differ from [${expected}]`);
    for (const r of resources) {
      const read = await client.readResource({ uri: r.uri });
      const text = read.contents[0].text;
      const name = r.uri.slice('skill://'.length);
      if (!text.startsWith('---\n') || !text.includes(`\nname: ${name}\n`))
        throw new Error(`${r.uri}: not the SKILL.md of ${name}`);
      if (read.contents[0].mimeType !== 'text/markdown') throw new Error(`${r.uri}: mimeType ${read.contents[0].mimeType}`);
    }
    const era = mode === 'v1' ? 'legacy' : client.getProtocolEra();
    return `era=${era} prompts=${names.length} resources=${uris.length} completions=${completed}`;
  } finally {
    await client.close();
  }
}

let failed = 0;
for (const mode of ['v1', 'v2-modern']) {
  try {
    const info = await Promise.race([
      runCase(mode),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timed out after 60 s')), 60000)),
    ]);
    console.log(`ok   stdio ${mode}: ${info}`);
  } catch (e) {
    failed++;
    console.log(`FAIL stdio ${mode}: ${e.message}`);
  }
}
process.exit(failed ? 1 : 0);
