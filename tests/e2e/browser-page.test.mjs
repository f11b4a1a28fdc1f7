// Browser pages (issue 8, item 11): a page of an app with the packed tarball installed, served by
// `vite dev` and by `vite preview` of a built client, calls `runSandbox` against a local Box host
// started with `vite-hub-sandbox host --allow-origin <origin>` (repeatable), in headless Chromium
// (/usr/bin/chromium driven by /usr/bin/chromedriver over WebDriver). The plugin keeps the package out of client pre-bundling so
// the wasm loads; the host answers CORS (preflight included) for the allowed origins only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { removeDir, stopChild, freePort, eventually } from '../support/vite-app.mjs';
import { installTarballApp } from '../support/tarball-app.mjs';

const exec = promisify(execFile);
const CHROMIUM = '/usr/bin/chromium';
const CHROMEDRIVER = '/usr/bin/chromedriver';
let app;
let packDir;
let bin;
const children = [];

const PAGE = {
  'vite.config.mjs':
    "import { hubSandbox } from '@vite-hub/sandbox/vite';\nexport default { plugins: [hubSandbox()] };\n",
  'index.html':
    '<!doctype html>\n<html><body><pre id="out">pending</pre><script type="module" src="/main.js"></script></body></html>\n',
  'main.js': `import { configureSandbox, initSandbox, registerSandbox, runSandbox } from '@vite-hub/sandbox';
const params = new URLSearchParams(location.search);
const out = document.getElementById('out');
try {
  await initSandbox();
  configureSandbox({ provider: 'local', local: { baseUrl: params.get('baseUrl'), token: params.get('token') } });
  registerSandbox('double', {
    files: [
      { path: 'package.json', content: '{"name":"double","type":"module"}' },
      { path: 'index.mjs', content: 'export default (payload) => ({ doubled: payload.n * 2, node: process.versions.node.split(".")[0] });\\n' },
    ],
  });
  const response = await runSandbox('double', { n: 21 });
  out.textContent = JSON.stringify({ status: response.status, body: await response.json(), timing: response.headers.get('server-timing') });
} catch (error) {
  out.textContent = JSON.stringify({ error: String(error && error.message || error) });
}
`,
};

/** Spawns a long-running command of the app and remembers it for after(). */
function start(command, args) {
  const child = spawn(command, args, {
    cwd: app,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SANDBOX_PROVIDER: '' },
  });
  children.push(child);
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return { child, output: () => output };
}

/** `vite-hub-sandbox host` with these --allow-origin values; resolves to { baseUrl, token, child }. */
async function startHost(origins) {
  const child = spawn(bin('vite-hub-sandbox'), ['host', ...origins.flatMap((origin) => ['--allow-origin', origin])], {
    cwd: app,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  // A host that cannot start exits without its line: fail then instead of waiting for good.
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`vite-hub-sandbox host exited with ${code} before listening`);
  });
  const [line] = await Promise.race([once(createInterface({ input: child.stdout }), 'line'), exited]);
  exited.catch(() => {});
  return { ...JSON.parse(line), child };
}

/** A WebDriver session of headless Chromium through /usr/bin/chromedriver (the W3C protocol over fetch). */
let driver;
async function webdriver(method, path, body) {
  const response = await fetch(`${driver.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(`WebDriver ${method} ${path}: ${JSON.stringify(answer.value)}`);
  return answer.value;
}

/** Opens `url` in headless Chromium and resolves to what the page wrote into #out (parsed JSON), waiting up to 60 s. */
async function openPage(url) {
  await webdriver('POST', `/session/${driver.session}/url`, { url });
  const text = await eventually(
    async () => {
      const value = await webdriver('POST', `/session/${driver.session}/execute/sync`, {
        script: "return document.getElementById('out')?.textContent ?? null",
        args: [],
      });
      return value && value !== 'pending' ? value : null;
    },
    60_000,
    'the page to finish its Run',
  );
  return JSON.parse(text);
}

let devOrigin;
let previewOrigin;
let chromeTmp;
before(async () => {
  ({ app, packDir, bin } = await installTarballApp('browser', { example: false, files: PAGE }));
  const driverPort = await freePort();
  // Chromium leaves its profile and scoped dirs in TMPDIR: a private one, removed after.
  chromeTmp = mkdtempSync(join(tmpdir(), 'vite-hub-chromium-'));
  const chromedriver = spawn(CHROMEDRIVER, [`--port=${driverPort}`], {
    stdio: 'ignore',
    env: { ...process.env, TMPDIR: chromeTmp },
  });
  children.push(chromedriver);
  driver = { url: `http://127.0.0.1:${driverPort}` };
  await eventually(
    () => fetch(`${driver.url}/status`).then((response) => response.ok),
    20_000,
    'chromedriver to start',
  );
  const session = await webdriver('POST', '/session', {
    capabilities: {
      alwaysMatch: {
        browserName: 'chrome',
        'goog:chromeOptions': {
          binary: CHROMIUM,
          args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
        },
      },
    },
  });
  driver.session = session.sessionId;
  const devPort = await freePort();
  devOrigin = `http://127.0.0.1:${devPort}`;
  const dev = start(process.execPath, [
    join(app, 'node_modules/vite/bin/vite.js'),
    'dev',
    '--port',
    String(devPort),
    '--strictPort',
    '--host',
    '127.0.0.1',
  ]);
  await eventually(() => dev.output().includes('ready in'), 30_000, 'vite dev to start');
  await exec(process.execPath, [join(app, 'node_modules/vite/bin/vite.js'), 'build'], { cwd: app, timeout: 120_000 });
  const previewPort = await freePort();
  previewOrigin = `http://127.0.0.1:${previewPort}`;
  const preview = start(process.execPath, [
    join(app, 'node_modules/vite/bin/vite.js'),
    'preview',
    '--port',
    String(previewPort),
    '--strictPort',
    '--host',
    '127.0.0.1',
  ]);
  await eventually(
    () => fetch(previewOrigin).then((response) => response.ok),
    30_000,
    `vite preview to start (${preview.output()})`,
  );
});
after(async () => {
  if (driver?.session) await webdriver('DELETE', `/session/${driver.session}`).catch(() => {});
  for (const child of children) await stopChild(child);
  if (app) removeDir(app);
  if (packDir) removeDir(packDir);
  if (chromeTmp) rmSync(chromeTmp, { recursive: true, force: true });
});

test('the host answers CORS for the allowed origins only, preflight included; * is refused', async () => {
  const host = await startHost([devOrigin, previewOrigin]);
  const preflight = (origin) =>
    fetch(`${host.baseUrl}/v2/sandboxes`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
  const allowed = await preflight(devOrigin);
  assert.equal(allowed.status, 204);
  assert.equal(allowed.headers.get('access-control-allow-origin'), devOrigin);
  assert.equal(allowed.headers.get('access-control-allow-headers'), 'authorization,content-type');
  assert.match(allowed.headers.get('access-control-allow-methods'), /\bPOST\b/);
  assert.equal((await preflight(previewOrigin)).headers.get('access-control-allow-origin'), previewOrigin);
  const other = await preflight('http://evil.test');
  assert.equal(other.status, 401);
  assert.equal(other.headers.get('access-control-allow-origin'), null);
  // A real request still needs the token; an allowed origin gets its headers on the answer too.
  const noToken = await fetch(`${host.baseUrl}/v2/sandboxes`, { headers: { origin: devOrigin } });
  assert.equal(noToken.status, 401);
  assert.equal(noToken.headers.get('access-control-allow-origin'), devOrigin);
  await stopChild(host.child);
  await assert.rejects(exec(bin('vite-hub-sandbox'), ['host', '--allow-origin', '*']), {
    code: 2,
    stderr: /--allow-origin "\*" is not an origin/,
  });
  await assert.rejects(exec(bin('vite-hub-sandbox'), ['host', '--allow-origin', 'http://localhost:5173/app']), {
    code: 2,
  });
});

test('a page served by vite dev runs a Definition on the local host and reads the Response', async () => {
  const host = await startHost([devOrigin, previewOrigin]);
  const result = await openPage(`${devOrigin}/?baseUrl=${encodeURIComponent(host.baseUrl)}&token=${host.token}`);
  assert.equal(result.error, undefined, JSON.stringify(result));
  assert.equal(result.status, 200);
  assert.equal(result.body.doubled, 42);
  assert.match(result.body.node, /^\d+$/);
  assert.match(result.timing, /box;dur=.*exec;dur=/);
  await stopChild(host.child);
});

test('a page of the built client (vite build + preview) does the same', async () => {
  const host = await startHost([devOrigin, previewOrigin]);
  const result = await openPage(`${previewOrigin}/?baseUrl=${encodeURIComponent(host.baseUrl)}&token=${host.token}`);
  assert.equal(result.error, undefined, JSON.stringify(result));
  assert.equal(result.status, 200);
  assert.equal(result.body.doubled, 42);
  await stopChild(host.child);
});

test('without --allow-origin for the page the browser blocks the call', async () => {
  const host = await startHost([previewOrigin]);
  const result = await openPage(`${devOrigin}/?baseUrl=${encodeURIComponent(host.baseUrl)}&token=${host.token}`);
  // The browser refuses the host's answer: the Run resolves to the transport error Response.
  assert.equal(result.status, 502, JSON.stringify(result));
  assert.equal(result.body.error.code, 'SANDBOX_TRANSPORT_ERROR');
  assert.match(result.body.error.message, /create request to the local provider failed: Failed to fetch/);
  await stopChild(host.child);
});
