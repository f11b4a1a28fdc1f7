// A Worker bundle of the example app (hubSandbox + the `workerd` conditions) run in real workerd
// (miniflare): runSandbox resolves names against the generated registry, loads one Definition
// chunk per name, and runs it in a Box of the local Box host through the Worker's fetch. The app
// has the packed package installed from its tarball; Vite and the plugin are the app's own.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Miniflare } from 'miniflare';
import { removeDir } from '../support/vite-app.mjs';
import { installTarballApp } from '../support/tarball-app.mjs';
import { countersAfterStop } from '../support/cloudflare-worker.mjs';

const WORKER = `import { runSandbox, configureSandbox } from '@vite-hub/sandbox';
export default {
  async fetch(request, env) {
    // Worker idiom: provider settings come from bindings at request time, never from the bundle.
    configureSandbox({ provider: 'local', local: { baseUrl: env.BOX_HOST_URL, token: env.BOX_HOST_TOKEN } });
    const { name, payload } = await request.json();
    return runSandbox(name, payload);
  },
};
`;
const CONDITIONS = ['workerd', 'worker', 'module', 'import', 'default'];

let app;
let packDir;
let host;
let miniflare;
let chunks;
let entryCode;

before(async () => {
  ({ app, packDir } = await installTarballApp('worker'));
  const fromApp = (path) => import(pathToFileURL(join(app, 'node_modules', path)).href);
  const { build } = await fromApp('vite/dist/node/index.js');
  const { hubSandbox } = await fromApp('@vite-hub/sandbox/vite/vite.mjs');
  const { startBoxHost } = await fromApp('@vite-hub/sandbox/box-host/index.mjs');
  writeFileSync(join(app, 'worker.mjs'), WORKER);
  const result = await build({
    root: app,
    configFile: false,
    logLevel: 'silent',
    plugins: [hubSandbox()],
    resolve: { conditions: CONDITIONS },
    ssr: { noExternal: true, resolve: { conditions: CONDITIONS, externalConditions: CONDITIONS } },
    build: { ssr: 'worker.mjs', outDir: 'dist-worker', rollupOptions: { external: [/\.wasm$/, /^cloudflare:/] } },
  });
  chunks = (Array.isArray(result) ? result[0] : result).output;
  const out = join(app, 'dist-worker');
  // Wrangler resolves the `.wasm` import when it deploys; here the module is placed beside the bundle.
  entryCode = readFileSync(join(out, 'worker.js'), 'utf8');
  writeFileSync(
    join(out, 'worker.js'),
    entryCode.replace(/"[^"]*vite_hub_sandbox_bg\.wasm"/, '"./vite_hub_sandbox_bg.wasm"'),
  );
  copyFileSync(
    join(app, 'node_modules/@vite-hub/sandbox/wasm/vite_hub_sandbox_bg.wasm'),
    join(out, 'vite_hub_sandbox_bg.wasm'),
  );
  host = await startBoxHost({});
  miniflare = new Miniflare({
    modules: true,
    scriptPath: join(out, 'worker.js'),
    modulesRoot: out,
    modulesRules: [
      { type: 'ESModule', include: ['**/*.js'] },
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
    ],
    compatibilityDate: '2025-09-01',
    bindings: { BOX_HOST_URL: host.baseUrl, BOX_HOST_TOKEN: host.token },
  });
});

after(async () => {
  await miniflare?.dispose();
  await host?.close();
  if (app) removeDir(app);
  if (packDir) removeDir(packDir);
});

async function runInWorker(name, payload) {
  const response = await miniflare.dispatchFetch('http://worker.test/', {
    method: 'POST',
    body: JSON.stringify({ name, payload }),
  });
  return { status: response.status, json: await response.json() };
}

test('the Worker bundle uses the workerd entry and one lazily imported chunk per Definition', () => {
  const entry = chunks.find((chunk) => chunk.fileName === 'worker.js');
  assert.match(
    entryCode,
    /import wasmModule from "[^"]*vite_hub_sandbox_bg\.wasm"/,
    'the workerd entry, with the .wasm as a module',
  );
  assert.match(entry.code, /setSandboxDefinitionLoader\(loadDefinition, describeRegistry\)/);
  assert.doesNotMatch(entry.code, /from "node:|box-host/);
  const definitions = chunks.filter((chunk) =>
    /(release-notes|slugify-title|order-summary|word-count)-[\w-]+\.js$/.test(chunk.fileName),
  );
  assert.equal(definitions.length, 4, chunks.map((c) => c.fileName).join(', '));
  for (const chunk of definitions) assert.ok(entry.code.includes(`import("./${chunk.fileName}")`), chunk.fileName);
});

test('in workerd, runSandbox runs a registry Definition in a Box (4 requests to the Box host)', async () => {
  await host.resetCounters();
  const { status, json } = await runInWorker('release-notes', { notes: '- one\n- two' });
  assert.equal(status, 200, JSON.stringify(json));
  assert.deepEqual(json, { summary: '2 changes: one; two', items: ['one', 'two'] });
  const counters = await countersAfterStop(host);
  assert.deepEqual(counters.requests, { create: 1, 'fs/write': 1, cmd: 1, stop: 1 });
});

test('in workerd, a free-form Definition from the registry runs too', async () => {
  const { status, json } = await runInWorker('word-count', { text: 'a b a', top: 1 });
  assert.equal(status, 200, JSON.stringify(json));
  assert.deepEqual(json, { words: 3, top: [{ word: 'a', count: 2 }] });
});

test('in workerd, a name the registry does not have is SANDBOX_NOT_FOUND, with no Box opened', async () => {
  await host.resetCounters();
  const { status, json } = await runInWorker('not-there', {});
  assert.equal(status, 500);
  assert.equal(json.error.code, 'SANDBOX_NOT_FOUND');
  // The built registry answers its names: the miss lists them.
  assert.equal(
    json.error.message,
    'Sandbox "not-there" was not found. Registered: "order-summary", "release-notes", "slugify-title", "word-count".',
  );
  assert.equal((await host.counters()).total, 0);
});
