// A real `vite build` of examples/app (Vite 7 + Nitro v3 + hubSandbox) with the packed package
// installed from its tarball, its output server started, and HTTP POSTs answered by runs in local
// Boxes; then the package's CLI as installed (`node_modules/.bin/vite-hub-sandbox`) in that app.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { removeDir, stopChild, freePort, postJson, eventually } from '../support/vite-app.mjs';
import { installTarballApp, readmeFirstDefinition } from '../support/tarball-app.mjs';
import { listeningSockets } from '../support/sockets.mjs';

const run = promisify(execFile);
let app;
let packDir;
let bin;
let server;
let base;

before(async () => {
  ({ app, packDir, bin } = await installTarballApp('build', { files: readmeFirstDefinition() }));
  await run(process.execPath, [join(app, 'node_modules/vite/bin/vite.js'), 'build'], { cwd: app, timeout: 120_000 });
  const port = await freePort();
  server = spawn(process.execPath, ['.output/server/index.mjs'], {
    cwd: app,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', SANDBOX_PROVIDER: 'local' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  server.stdout.on('data', (chunk) => (output += chunk));
  server.stderr.on('data', (chunk) => (output += chunk));
  base = `http://127.0.0.1:${port}`;
  await eventually(() => fetch(base).then(() => true), 20_000, `the output server (${output})`);
});

after(async () => {
  await stopChild(server);
  if (app) removeDir(app);
  if (packDir) removeDir(packDir);
});

test('POST /api/release-notes runs release-notes (local TypeScript) in a Box; the host was started with the server', async () => {
  // SANDBOX_PROVIDER=local: the server's start-up (vite/nitro-warm-up.mjs) started the in-process
  // host before any request: its own socket and the host's listen. Without the plugin only one does.
  await eventually(() => listeningSockets(server.pid) === 2, 20_000, 'the Box host listening beside the server');
  const { status, json, text, headers } = await postJson(`${base}/api/release-notes`, {
    notes: '# v3\n- ship the plugin\n- fix dev reload',
  });
  assert.equal(status, 200, text);
  assert.deepEqual(json, {
    summary: '2 changes: ship the plugin; fix dev reload',
    items: ['ship the plugin', 'fix dev reload'],
  });
  const timing = headers.get('server-timing') ?? '';
  assert.match(timing, /\bbox;dur=/, timing);
  assert.doesNotMatch(timing, /\b(host|connect);dur=/, timing);
});

test('a built server whose env chooses another provider starts no Box host', async () => {
  const port = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    SANDBOX_PROVIDER: 'vercel',
    VERCEL_TOKEN: 'a-token-of-16-chars',
    VERCEL_TEAM_ID: 'team',
    VERCEL_PROJECT_ID: 'project',
  };
  const other = spawn(process.execPath, ['.output/server/index.mjs'], { cwd: app, env, stdio: 'ignore' });
  try {
    await eventually(() => fetch(`http://127.0.0.1:${port}`).then(() => true), 20_000, 'the second output server');
    // The start-up plugin's warmUp({ onlyIfUsed: true }) resolves false without starting one; a
    // started host would listen within ~100 ms of the server.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(listeningSockets(other.pid), 1, 'only the server listens');
  } finally {
    await stopChild(other);
  }
});

test('POST /api/slugify runs slugify-title, which installs its npm dependency in the Box', async () => {
  const { status, json, text } = await postJson(`${base}/api/slugify`, { title: 'Hello, Wörld & Friends!' });
  assert.equal(status, 200, text);
  assert.deepEqual(json, { slug: 'hello-world-and-friends' });
});

test('POST /api/order-summary runs a pnpm-workspace Definition (workspace packages linked by pnpm in the Box)', async () => {
  const { status, json, text } = await postJson(`${base}/api/order-summary`, {
    items: [{ sku: 'tea', quantity: 3, unitCents: 250 }],
    taxRate: 0.1,
  });
  assert.equal(status, 200, text);
  assert.deepEqual(json, {
    lines: [{ sku: 'tea', quantity: 3, totalCents: 750 }],
    subtotalCents: 750,
    taxCents: 75,
    totalCents: 825,
    total: '€8.25',
  });
});

test('POST /api/word-count runs a free-form .sandbox.ts Definition (bundled with its local import)', async () => {
  const { status, json, text } = await postJson(`${base}/api/word-count`, { text: 'to be or not to be', top: 2 });
  assert.equal(status, 200, text);
  assert.deepEqual(json, {
    words: 6,
    top: [
      { word: 'to', count: 2 },
      { word: 'be', count: 2 },
    ],
  });
});

test("the README's first Definition answers from the built server", async () => {
  const { status, json, text } = await postJson(`${base}/api/hello`, { name: 'Ada' });
  assert.equal(status, 200, text);
  assert.deepEqual(json, { greeting: 'Hello, Ada' });
});

test('the built registry loads only the Definition that runs: one chunk per Definition, imported dynamically', () => {
  const chunks = join(app, '.output/server/chunks/_');
  const files = readdirSync(chunks);
  const definitionChunks = files.filter((f) =>
    /^(release-notes|slugify-title|order-summary|word-count|hello)(-[\w-]+)?\.mjs$/.test(f),
  );
  assert.equal(definitionChunks.length, 5, files.join(', '));
  for (const file of definitionChunks) {
    assert.match(readFileSync(join(chunks, file), 'utf8'), /"encoding": ?"base64"/);
  }
  const facade = files
    .map((f) => readFileSync(join(chunks, f), 'utf8'))
    .find((code) => code.includes('setSandboxDefinitionLoader'));
  assert.ok(facade, 'the facade chunk installs the loader');
  for (const file of definitionChunks) assert.ok(facade.includes(`import("./${file}")`), `dynamic import of ${file}`);
  assert.doesNotMatch(facade, /ship it|slugify\(/, 'Definition contents are not in the facade chunk');
});

test('the installed CLI runs a Definition folder of the app and prints the Response', async () => {
  const { stdout } = await run(
    bin('vite-hub-sandbox'),
    ['run', 'server/sandboxes/release-notes', '--payload', '{"notes":"- ship it"}'],
    { cwd: app, timeout: 120_000 },
  );
  const [head, body] = stdout.split('\n\n');
  assert.equal(head.split('\n')[0], 'HTTP/1.1 200', stdout);
  assert.deepEqual(JSON.parse(body), { summary: '1 change: ship it', items: ['ship it'] });
});

test("the installed CLI lists the app's Definitions", async () => {
  const { stdout } = await run(bin('vite-hub-sandbox'), ['inspect', '--json'], { cwd: app, timeout: 60_000 });
  assert.deepEqual(
    JSON.parse(stdout)
      .map((d) => d.name)
      .sort(),
    ['hello', 'order-summary', 'release-notes', 'slugify-title', 'word-count'],
  );
});
