// The user path: `npm pack` of the built dist/, installed (no links, npm's cache first)
// into a fresh app outside the repository made from examples/worker-app, built with `vite build`
// (Nitro cloudflare-module + hubSandbox({ provider: 'cloudflare' })), dry-run deployed offline and
// run in real workerd (miniflare).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { repoRoot } from '../support/vite-app.mjs';
import {
  builtWorker,
  isWasm,
  uploadGzipKiB,
  viteBuild,
  WORKER_GZIP_BUDGET_KIB,
  wranglerDryRun,
} from '../support/cloudflare-worker.mjs';

const run = promisify(execFile);
const versionOf = (name) =>
  JSON.parse(readFileSync(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')).version;

// Test-only route (as in cloudflare-vite.test.mjs): a Run on the local Box host named in the Worker env.
const LOCAL_ROUTE = `import { defineHandler } from 'nitro/h3';
import { configureSandbox, runSandbox } from '@vite-hub/sandbox';
export default defineHandler(async (event) => {
  const env = event.req.runtime?.cloudflare?.env ?? {};
  configureSandbox({ provider: 'local', local: { baseUrl: env.BOX_HOST_URL, token: env.BOX_HOST_TOKEN } });
  const { name, payload } = await event.req.json();
  return runSandbox(name, payload);
});
`;

let base;
let app;
let host;
let miniflare;

before(async () => {
  base = mkdtempSync(join(tmpdir(), 'vite-hub-cloudflare-tarball-'));
  const { stdout } = await run('npm', ['pack', '--pack-destination', base, '--silent'], {
    cwd: join(repoRoot, 'dist'),
    timeout: 60_000,
  });
  const tarball = stdout.trim().split('\n').at(-1);
  app = join(base, 'app');
  cpSync(join(repoRoot, 'examples/worker-app'), app, {
    recursive: true,
    filter: (source) => !/[\\/](\.output|\.nitro|\.vite-hub|\.wrangler|node_modules)$/.test(source),
  });
  const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
  manifest.dependencies = {
    '@vite-hub/sandbox': `file:../${tarball}`,
    '@cloudflare/sandbox': versionOf('@cloudflare/sandbox'),
    nitro: versionOf('nitro'),
    vite: versionOf('vite'),
  };
  // wrangler is run from the repository (a CLI, 195 MB): the app's install stays small. Nothing
  // else: the package brings its build steps' libraries.
  writeFileSync(join(app, 'package.json'), JSON.stringify(manifest, null, 2));
  writeFileSync(join(app, 'server/api/local-run.post.ts'), LOCAL_ROUTE);
  // --prefer-offline, as tarball-app.mjs: the cache first. Not --offline: setup's `npm ci` caches
  // the lockfile's tarballs but no registry metadata, which this lockfile-less install needs (a
  // fresh machine's cache answered ENOTCACHED for @cloudflare/sandbox).
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--install-links'], {
    cwd: app,
    timeout: 300_000,
  });
  await viteBuild(app, join(app, 'node_modules/vite/bin/vite.js'));
  const server = join(app, '.output/server');
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
  if (base) rmSync(base, { recursive: true, force: true });
});

test('the package is installed from the tarball: a real directory, not a link into the repository', () => {
  const installed = join(app, 'node_modules/@vite-hub/sandbox');
  assert.ok(!lstatSync(installed).isSymbolicLink());
  assert.ok(existsSync(join(installed, 'vite/provider-output.mjs')));
  assert.ok(existsSync(join(app, 'node_modules/modern-tar')), 'its dependency came with it');
});

test('vite build writes the Worker, its wasm module and the Provider Output', () => {
  const server = join(app, '.output/server');
  const wasm = readdirSync(join(server, 'assets')).filter((name) => name.endsWith('.wasm'));
  assert.equal(wasm.length, 1);
  assert.ok(isWasm(join(server, 'assets', wasm[0])));
  const config = JSON.parse(readFileSync(join(server, 'wrangler.json'), 'utf8'));
  assert.deepEqual(config.durable_objects.bindings, [{ name: 'SANDBOX', class_name: 'Sandbox' }]);
  assert.equal(config.containers[0].image, `docker.io/cloudflare/sandbox:${versionOf('@cloudflare/sandbox')}`);
  assert.ok(existsSync(join(server, 'Dockerfile')));
});

test('wrangler deploy --dry-run of the built app works offline; the Worker carries no build step', async () => {
  const { stdout, dir, outDir, files } = await wranglerDryRun(app);
  try {
    assert.match(stdout, /env\.SANDBOX \(Sandbox\)/);
    // The size budget of a JS Worker on the package (DESIGN.md §9), as wrangler reports it.
    assert.ok(uploadGzipKiB(stdout) <= WORKER_GZIP_BUDGET_KIB, `${uploadGzipKiB(stdout)} KiB gzipped`);
    assert.equal(files.filter((name) => name.endsWith('.wasm')).length, 1, files.join(', '));
    // What the Worker uploads (issue 23 item 5): the runtime alone. None of the build steps'
    // libraries (regular dependencies of the package) nor their glue is bundled.
    const modules = files
      .filter((name) => /\.(m?js|wasm)$/.test(name))
      .map((name) => ({ name, bytes: readFileSync(join(outDir, name)) }));
    const sum = (list) => list.reduce((total, { bytes }) => total + bytes.length, 0);
    const gzipped = (list) => list.reduce((total, { bytes }) => total + gzipSync(bytes, { level: 9 }).length, 0);
    console.log(
      `Worker upload: ${sum(modules)} bytes (${gzipped(modules)} gzipped), wasm ${sum(modules.filter((m) => m.name.endsWith('.wasm')))} bytes, js ${sum(modules.filter((m) => !m.name.endsWith('.wasm')))} bytes`,
    );
    const js = modules
      .filter((m) => !m.name.endsWith('.wasm'))
      .map((m) => m.bytes.toString('utf8'))
      .join('\n');
    for (const [library, marker] of [
      ['yaml', 'YAMLParseError'],
      ['eslint-scope', 'ScopeManager'],
      ['smol-toml', 'TomlError'],
      ['jsonc-parser', 'PropertyNameExpected'],
      ['the build glue', 'checkModuleGraph'],
    ]) {
      assert.ok(!js.includes(marker), `the Worker bundles ${library} ("${marker}")`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('in workerd, the built Worker runs a Definition on the local Box host', async () => {
  const response = await miniflare.dispatchFetch('http://worker.test/api/local-run', {
    method: 'POST',
    body: JSON.stringify({ name: 'greeting', payload: { name: 'Grace' } }),
  });
  const json = await response.json();
  assert.equal(response.status, 200, JSON.stringify(json));
  assert.equal(json.greeting, 'Hello, Grace!');
});

test("without a wrangler config of its own, the app gets a whole one with the pinned compatibility date (not Nitro's today)", async () => {
  rmSync(join(app, 'wrangler.jsonc'));
  await viteBuild(app, join(app, 'node_modules/vite/bin/vite.js'));
  const config = JSON.parse(readFileSync(join(app, '.output/server/wrangler.json'), 'utf8'));
  assert.equal(config.compatibility_date, '2026-04-01');
  assert.equal(config.main, 'index.mjs');
  assert.ok(config.compatibility_flags.includes('nodejs_compat'));
  assert.deepEqual(config.migrations, [{ tag: 'v1', new_sqlite_classes: ['Sandbox'] }]);
});

test('in workerd, the app route runs on the cloudflare provider, its container traffic on the local Box host (SANDBOX_LOCAL_URL/TOKEN)', async () => {
  const server = join(app, '.output/server');
  const local = builtWorker({
    dir: server,
    compatibilityDate: JSON.parse(readFileSync(join(server, 'wrangler.json'), 'utf8')).compatibility_date,
    bindings: { SANDBOX_LOCAL_URL: host.baseUrl, SANDBOX_LOCAL_TOKEN: host.token },
  });
  try {
    const response = await local.dispatchFetch('http://worker.test/api/greeting', {
      method: 'POST',
      body: JSON.stringify({ name: 'Lin' }),
    });
    const json = await response.json();
    assert.equal(response.status, 200, JSON.stringify(json));
    assert.equal(json.greeting, 'Hello, Lin!');
  } finally {
    await local.dispose();
  }
});
