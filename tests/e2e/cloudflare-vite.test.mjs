// A Vite + Nitro app (examples/worker-app) built with Nitro's cloudflare-module preset and
// hubSandbox({ provider: 'cloudflare' }): the runtime wasm is a real WebAssembly module beside the
// Worker, the Worker exports the `Sandbox` class, the Provider Output is merged into the
// wrangler.json Nitro writes, `wrangler deploy --dry-run` takes it offline, and the built Worker
// runs a Definition in real workerd (miniflare) through the local provider over the Worker's fetch.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { removeDir, repoRoot } from '../support/vite-app.mjs';
import { builtWorker, countersAfterStop, isWasm, viteBuild, wranglerDryRun } from '../support/cloudflare-worker.mjs';

const SANDBOX_VERSION = JSON.parse(
  readFileSync(join(repoRoot, 'node_modules/@cloudflare/sandbox/package.json'), 'utf8'),
).version;

// Test-only route: the Worker runs a Definition on the local Box host given in its env. This is
// what proves the wasm loads and runs in workerd before the cloudflare provider exists.
const LOCAL_ROUTE = `import { defineHandler } from 'nitro/h3';
import { configureSandbox, runSandbox } from '@vite-hub/sandbox';

export default defineHandler(async (event) => {
  const env = event.req.runtime?.cloudflare?.env ?? {};
  configureSandbox({ provider: 'local', local: { baseUrl: env.BOX_HOST_URL, token: env.BOX_HOST_TOKEN } });
  const { name, payload } = await event.req.json();
  return runSandbox(name, payload);
});
`;

/** Copies examples/worker-app under target/ (Node resolves vite, nitro and the package from the repo). */
function copyWorkerApp(prefix) {
  const base = join(repoRoot, 'target', 'vite-tests');
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, `${prefix}-`));
  cpSync(join(repoRoot, 'examples', 'worker-app'), dir, {
    recursive: true,
    filter: (source) => !/[\\/](\.output|\.nitro|\.vite-hub|\.wrangler|node_modules)$/.test(source),
  });
  return dir;
}

let app;
let server;
let host;
let miniflare;

before(async () => {
  app = copyWorkerApp('cloudflare-vite');
  writeFileSync(join(app, 'server/api/local-run.post.ts'), LOCAL_ROUTE);
  await viteBuild(app);
  server = join(app, '.output/server');
  host = await startBoxHost({});
  miniflare = builtWorker({
    dir: server,
    compatibilityDate: JSON.parse(readFileSync(join(server, 'wrangler.json'), 'utf8')).compatibility_date,
    bindings: { BOX_HOST_URL: host.baseUrl, BOX_HOST_TOKEN: host.token },
  });
});

after(async () => {
  await miniflare?.dispose();
  await host?.close();
  if (app) removeDir(app);
});

test('the build writes the Provider Output into the wrangler.json Nitro writes, and leaves the app config alone', () => {
  const config = JSON.parse(readFileSync(join(server, 'wrangler.json'), 'utf8'));
  assert.equal(config.name, 'vite-hub-sandbox-worker-app', 'the app config is the base');
  assert.equal(config.main, 'index.mjs');
  assert.equal(config.compatibility_date, '2026-04-01');
  assert.ok(config.compatibility_flags.includes('nodejs_compat'));
  assert.deepEqual(config.durable_objects.bindings, [{ name: 'SANDBOX', class_name: 'Sandbox' }]);
  assert.deepEqual(config.migrations, [{ tag: 'v1', new_sqlite_classes: ['Sandbox'] }]);
  assert.deepEqual(config.containers, [
    {
      class_name: 'Sandbox',
      image: `docker.io/cloudflare/sandbox:${SANDBOX_VERSION}`,
      instance_type: 'lite',
      max_instances: 10,
    },
  ]);
  assert.match(
    readFileSync(join(server, 'Dockerfile'), 'utf8'),
    new RegExp(`^FROM docker\\.io/cloudflare/sandbox:${SANDBOX_VERSION.replaceAll('.', '\\.')}$`, 'm'),
  );
  assert.equal(
    readFileSync(join(app, 'wrangler.jsonc'), 'utf8'),
    readFileSync(join(repoRoot, 'examples/worker-app/wrangler.jsonc'), 'utf8'),
  );
});

test('the Worker imports the runtime wasm as a module (real WebAssembly bytes, a path that resolves) and exports Sandbox', () => {
  const wasm = readdirSync(join(server, 'assets')).filter((name) => name.endsWith('.wasm'));
  assert.equal(wasm.length, 1, wasm.join(', '));
  assert.ok(isWasm(join(server, 'assets', wasm[0])), 'starts with 00 61 73 6d');
  const importers = [];
  for (const file of readdirSync(server, { recursive: true }).filter((name) => name.endsWith('.mjs'))) {
    const code = readFileSync(join(server, file), 'utf8');
    for (const [, specifier] of code.matchAll(/import [\w$]+ from\s*"([^"]+\.wasm)"/g)) {
      importers.push(file);
      assert.ok(existsSync(join(server, file, '..', specifier)), `${file} imports ${specifier}`);
    }
  }
  assert.equal(importers.length, 1, importers.join(', '));
  assert.match(readFileSync(join(server, 'index.mjs'), 'utf8'), /export\s*\{[^}]*\bas Sandbox\b[^}]*\}/);
});

test('wrangler deploy --dry-run takes the built Worker offline, the wasm as its own module', async () => {
  const { stdout, dir, outDir, files } = await wranglerDryRun(app);
  assert.match(stdout, /env\.SANDBOX \(Sandbox\)\s+Durable Object/);
  assert.match(stdout, new RegExp(`docker\\.io/cloudflare/sandbox:${SANDBOX_VERSION.replaceAll('.', '\\.')}`));
  const wasm = files.filter((name) => name.endsWith('.wasm'));
  assert.equal(wasm.length, 1, files.join(', '));
  assert.ok(isWasm(join(outDir, wasm[0])));
  removeDir(dir);
});

test('in workerd, the app route finds the SANDBOX binding itself (cloudflare:workers env) and answers a SandboxError when no container can start', async () => {
  // The route passes no env: the workerd entry reads the Worker env, and its Durable Object
  // binding selects the cloudflare provider. This miniflare has no containers, so the Sandbox DO
  // refuses: a JSON error from the cloudflare provider, no crash. (Runs before the local-provider
  // test, which reconfigures the isolate.)
  const response = await miniflare.dispatchFetch('http://worker.test/api/greeting', {
    method: 'POST',
    body: JSON.stringify({ name: 'Ada' }),
  });
  const json = await response.json();
  assert.ok(response.status >= 500, JSON.stringify(json));
  assert.equal(json.error?.details?.provider, 'cloudflare', JSON.stringify(json));
});

test('in workerd, the built Worker runs a Definition through the local provider (the wasm loads and runs)', async () => {
  await host.resetCounters();
  const response = await miniflare.dispatchFetch('http://worker.test/api/local-run', {
    method: 'POST',
    body: JSON.stringify({ name: 'greeting', payload: { name: 'Ada' } }),
  });
  const json = await response.json();
  assert.equal(response.status, 200, JSON.stringify(json));
  assert.equal(json.greeting, 'Hello, Ada!');
  assert.deepEqual((await countersAfterStop(host)).requests, { create: 1, 'fs/write': 1, cmd: 1, stop: 1 });
});

test('in workerd, the app route runs the Definition on the cloudflare provider with its container traffic on the local Box host (SANDBOX_LOCAL_URL/TOKEN)', async () => {
  const local = builtWorker({
    dir: server,
    compatibilityDate: '2026-04-01',
    bindings: { SANDBOX_LOCAL_URL: host.baseUrl, SANDBOX_LOCAL_TOKEN: host.token },
  });
  try {
    const response = await local.dispatchFetch('http://worker.test/api/greeting', {
      method: 'POST',
      body: JSON.stringify({ name: 'Ada' }),
    });
    assert.equal(response.status, 200);
    assert.equal((await response.json()).greeting, 'Hello, Ada!');
  } finally {
    await local.dispose();
  }
});

test('a binding name the app config already gives another class fails the build, naming the file and the key', async () => {
  const clash = copyWorkerApp('cloudflare-vite-clash');
  try {
    removeDir(join(clash, 'wrangler.jsonc'));
    writeFileSync(
      join(clash, 'wrangler.toml'),
      'name = "clash"\ncompatibility_date = "2026-04-01"\n\n[[durable_objects.bindings]]\nname = "SANDBOX"\nclass_name = "Counter"\n',
    );
    await assert.rejects(viteBuild(clash), (error) => {
      assert.match(
        `${error.stdout}${error.stderr}`,
        /wrangler\.toml: durable_objects\.bindings: the binding name "SANDBOX" is already taken by class "Counter"/,
      );
      return true;
    });
  } finally {
    removeDir(clash);
  }
});
