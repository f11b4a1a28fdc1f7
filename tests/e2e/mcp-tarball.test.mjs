// The MCP server of a fresh app installed from the packed tarball, driven by the official MCP SDK
// client: `vite-hub-sandbox mcp` over stdio (the app's bin), and createSandboxMcpHandler mounted on a
// Nitro route (server/routes/mcp.ts) over Streamable HTTP in `vite dev` (loopback, no authorize)
// and in the built server (production: authorize by bearer token, refused without it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { eventually, freePort, removeDir, repoRoot, stopChild } from '../support/vite-app.mjs';
import { installTarballApp, repoVersion } from '../support/tarball-app.mjs';

const run = promisify(execFile);
const FIXTURE = join(repoRoot, 'tests', 'fixtures', 'mcp-app');
const TOKEN = 'test-token-of-the-mcp-route';
const ROUTE = `// The app's MCP endpoint: loopback only in dev; a bearer token in production.
import { defineHandler } from 'nitro/h3';
import { createSandboxMcpHandler } from '@vite-hub/sandbox/mcp';

const token = process.env.MCP_TOKEN;
const mcp = createSandboxMcpHandler(
  token ? { authorize: (request) => request.headers.get('authorization') === \`Bearer \${token}\` } : { sessions: true },
);
export default defineHandler((event) => mcp(event.req));
`;

/** The fixture's Definition files, by app-relative path. */
function fixtureFiles() {
  const files = {};
  for (const name of readdirSync(join(FIXTURE, 'server', 'sandboxes'), { recursive: true })) {
    const path = join('server', 'sandboxes', String(name));
    if (/\.(mjs|ts|json)$/.test(path)) files[path] = readFileSync(join(FIXTURE, path), 'utf8');
  }
  return files;
}

let app;
let packDir;
let bin;
const children = [];

before(async () => {
  ({ app, packDir, bin } = await installTarballApp('mcp', {
    // The MCP SDK is the package's optional peer: an app that serves MCP installs it.
    dependencies: { '@modelcontextprotocol/sdk': repoVersion('@modelcontextprotocol/sdk') },
    files: { ...fixtureFiles(), 'server/routes/mcp.ts': ROUTE },
  }));
});
after(async () => {
  for (const child of children) await stopChild(child);
  if (app) removeDir(app);
  if (packDir) removeDir(packDir);
});

/** The expected echo call: its structuredContent is the Definition's JSON result. */
async function callsEcho(client) {
  const result = await client.callTool({ name: 'echo', arguments: { text: 'tar', times: 2 } });
  assert.deepEqual(result.structuredContent, { echoed: 'tartar', length: 3 });
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
}

test('stdio: vite-hub-sandbox mcp of the installed app lists its Definitions and calls one', async () => {
  const client = new Client({ name: 'mcp-tarball', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: bin('vite-hub-sandbox'),
      args: ['mcp', '--root', app],
      cwd: app,
      stderr: 'pipe',
    }),
  );
  try {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    for (const name of ['echo', 'fail', 'wait', 'bytes', 'release-notes', 'slugify-title', 'word-count'])
      assert.ok(names.includes(name), `${name} in ${names}`);
    await callsEcho(client);
  } finally {
    await client.close();
  }
});

/** Starts a server child, collecting its output; resolves to `{ child, output() }` once `ready()` holds. */
async function start(args, env, ready) {
  let output = '';
  const child = spawn(process.execPath, args, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  await eventually(() => ready(output), 60_000, `the server to start (${output})`);
  return { child, output: () => output };
}

test('Streamable HTTP on a Nitro route in vite dev: the app registry as tools, loopback only, list changes announced', async () => {
  const port = await freePort();
  const env = { ...process.env };
  delete env.SANDBOX_PROVIDER;
  delete env.MCP_TOKEN;
  delete env.NODE_ENV;
  const dev = await start(
    [join(app, 'node_modules/vite/bin/vite.js'), 'dev', '--port', String(port), '--strictPort', '--host', '127.0.0.1'],
    env,
    (output) => output.includes('ready in'),
  );
  const client = new Client({ name: 'mcp-tarball-dev', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
  try {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    for (const name of ['echo', 'release-notes', 'word-count']) assert.ok(names.includes(name), `${name} in ${names}`);
    await callsEcho(client);
    // A Definition added while the session is open: vite dev regenerates the registry, the
    // handler (sessions: true) sees the tool list change and announces it.
    const changes = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => changes.push(Date.now()));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const folder = join(app, 'server', 'sandboxes', 'added-in-dev');
    mkdirSync(folder);
    writeFileSync(join(folder, 'package.json'), '{ "name": "added-in-dev", "private": true, "type": "module" }\n');
    writeFileSync(join(folder, 'index.mjs'), 'export default () => ({ added: true });\n');
    await eventually(() => changes.length > 0, 30_000, `tools/list_changed (${dev.output()})`);
    assert.ok((await client.listTools()).tools.some((tool) => tool.name === 'added-in-dev'));
    assert.deepEqual((await client.callTool({ name: 'added-in-dev', arguments: {} })).structuredContent, {
      added: true,
    });
  } finally {
    await client.close();
    await stopChild(dev.child);
  }
});

test('the built server: refused without the bearer token, served with it', async () => {
  await run(process.execPath, [join(app, 'node_modules/vite/bin/vite.js'), 'build'], {
    cwd: app,
    maxBuffer: 16 * 1024 * 1024,
    timeout: 300_000,
  });
  const port = await freePort();
  const env = { ...process.env, PORT: String(port), HOST: '127.0.0.1', SANDBOX_PROVIDER: 'local', MCP_TOKEN: TOKEN };
  await start(['.output/server/index.mjs'], env, () =>
    fetch(`http://127.0.0.1:${port}/`).then(
      () => true,
      () => false,
    ),
  );
  const url = new URL(`http://127.0.0.1:${port}/mcp`);
  const refused = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  assert.equal(refused.status, 401);
  const client = new Client({ name: 'mcp-tarball-built', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }),
  );
  try {
    assert.ok((await client.listTools()).tools.some((tool) => tool.name === 'echo'));
    await callsEcho(client);
  } finally {
    await client.close();
  }
  // The same build without a token (no authorize) and without NODE_ENV: a vite build is
  // production, so the handler refuses to be created (the fresh-user trial of issue 36 found it
  // served anyone from loopback, such as a reverse proxy on the machine).
  const open = { ...env, PORT: String(await freePort()) };
  delete open.MCP_TOKEN;
  delete open.NODE_ENV;
  const server = await start(['.output/server/index.mjs'], open, () =>
    fetch(`http://127.0.0.1:${open.PORT}/`).then(
      () => true,
      () => false,
    ),
  );
  const unguarded = await fetch(`http://127.0.0.1:${open.PORT}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  assert.notEqual(unguarded.status, 200);
  await eventually(
    () => server.output().includes('createSandboxMcpHandler needs options.authorize in production'),
    10_000,
    server.output(),
  );
});

test('a built server that loads nothing else of the package still lists the registry (the route is the only importer)', async () => {
  // Provider vercel at build time: no warm-up plugin loads the generated registry at start, so only
  // the /mcp route's own import can.
  const config = join(app, 'vite.config.mjs');
  const source = readFileSync(config, 'utf8');
  const vercel = source.replace('plugins: [hubSandbox()', "plugins: [hubSandbox({ provider: 'vercel' })");
  assert.notEqual(vercel, source);
  writeFileSync(config, vercel);
  await run(process.execPath, [join(app, 'node_modules/vite/bin/vite.js'), 'build'], {
    cwd: app,
    maxBuffer: 16 * 1024 * 1024,
    timeout: 300_000,
  });
  const port = await freePort();
  const env = { ...process.env, PORT: String(port), HOST: '127.0.0.1', MCP_TOKEN: TOKEN };
  delete env.SANDBOX_PROVIDER;
  await start(['.output/server/index.mjs'], env, () =>
    fetch(`http://127.0.0.1:${port}/`).then(
      () => true,
      () => false,
    ),
  );
  const client = new Client({ name: 'mcp-tarball-vercel', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    }),
  );
  try {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    for (const name of ['echo', 'release-notes', 'word-count']) assert.ok(names.includes(name), `${name} in ${names}`);
  } finally {
    await client.close();
  }
});
