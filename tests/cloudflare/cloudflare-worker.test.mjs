// The repository's own Worker (wrangler.toml, worker/): a Rust Worker (workers-rs, built by
// worker-build in wrangler's build step) on crates/worker. `wrangler deploy --dry-run` builds it
// offline (no Docker, no login, no network namespace access when `unshare -n` works), the upload
// holds the Worker's wasm as its own module and the main module exports `Sandbox`; the uploaded
// bundle itself runs the example Definitions in real workerd (miniflare), on the local Box host.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseToml } from 'smol-toml';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { removeDir, repoRoot } from '../support/vite-app.mjs';
import {
  builtWorker,
  countersAfterStop,
  isWasm,
  uploadGzipKiB,
  WORKER_GZIP_BUDGET_KIB,
  wranglerDryRun,
} from '../support/cloudflare-worker.mjs';
import { lockRepoWorkerBuild } from '../support/wrangler-dev.mjs';

const run = promisify(execFile);

let dryRun;
let host;
let miniflare;
let entry;

before(async () => {
  // The build step compiles the Rust Worker (release, LTO): minutes from a cold cargo cache. It
  // rewrites worker/build/, which wrangler-dev.test.mjs (run beside this file) bundles too.
  const release = await lockRepoWorkerBuild();
  try {
    dryRun = await wranglerDryRun(repoRoot, { timeout: 900_000 });
  } finally {
    release();
  }
  entry = dryRun.files.find((name) => name.endsWith('.js'));
  host = await startBoxHost({});
  miniflare = builtWorker({
    dir: dryRun.outDir,
    entry,
    compatibilityDate: parseToml(readFileSync(join(repoRoot, 'wrangler.toml'), 'utf8')).compatibility_date,
    bindings: { LOCAL_BOX_HOST_URL: host.baseUrl, LOCAL_BOX_HOST_TOKEN: host.token },
  });
});

after(async () => {
  await miniflare?.dispose();
  await host?.close();
  if (dryRun) removeDir(dryRun.dir);
});

const post = async (path, body) => {
  const response = await miniflare.dispatchFetch(`http://worker.test${path}`, {
    method: 'POST',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
};

test(`the repository's Worker uploads at most ${WORKER_GZIP_BUDGET_KIB} KiB gzipped`, () => {
  const kib = uploadGzipKiB(dryRun.stdout);
  console.log(`repository Worker upload: ${kib} KiB gzipped`);
  assert.ok(kib <= WORKER_GZIP_BUDGET_KIB, `${kib} KiB gzipped`);
});

test(`a minimal JS Worker on the package uploads at most ${WORKER_GZIP_BUDGET_KIB} KiB gzipped`, async () => {
  // tests/fixtures/cloudflare/minimal-worker: registerSandbox + runSandbox + the Sandbox export,
  // the least a JS Worker on the package carries (issue 34: a fifth of the Free plan's 3 MB).
  const minimal = await wranglerDryRun(join(repoRoot, 'tests/fixtures/cloudflare/minimal-worker'));
  try {
    assert.match(minimal.stdout, /env\.SANDBOX \(Sandbox\)\s+Durable Object/);
    // The package's runtime wasm is in the upload, as its own module: the Worker is on the package.
    const wasm = minimal.files.filter((name) => name.endsWith('.wasm'));
    assert.equal(wasm.length, 1, minimal.files.join(', '));
    assert.ok(
      readFileSync(join(minimal.outDir, wasm[0])).equals(
        readFileSync(join(repoRoot, 'dist/wasm/vite_hub_sandbox_bg.wasm')),
      ),
      `${wasm[0]} is dist's runtime wasm`,
    );
    const kib = uploadGzipKiB(minimal.stdout);
    console.log(`minimal JS Worker upload: ${kib} KiB gzipped`);
    assert.ok(kib <= WORKER_GZIP_BUDGET_KIB, `${kib} KiB gzipped`);
  } finally {
    removeDir(minimal.dir);
  }
});

test('the dry run is offline and names the Sandbox binding and the registry image', () => {
  assert.match(dryRun.stdout, /registry of examples\/app: order-summary, release-notes, slugify-title, word-count/);
  assert.match(dryRun.stdout, /env\.SANDBOX \(Sandbox\)\s+Durable Object/);
  assert.match(dryRun.stdout, /docker\.io\/cloudflare\/sandbox:\d+\.\d+\.\d+/);
  assert.match(dryRun.stdout, /--dry-run: exiting now/);
});

test("the upload holds the Rust Worker's wasm as a module of its own and a main module that exports Sandbox", () => {
  const wasm = dryRun.files.filter((name) => name.endsWith('.wasm'));
  assert.deepEqual(wasm.length, 1, dryRun.files.join(', '));
  assert.ok(isWasm(join(dryRun.outDir, wasm[0])), 'starts with 00 61 73 6d');
  // worker-build's wasm (its producers section names workers-rs), not the npm runtime wasm.
  const bytes = readFileSync(join(dryRun.outDir, wasm[0]));
  assert.ok(bytes.includes('workers-rs'), `${wasm[0]} names workers-rs among its producers`);
  assert.ok(!bytes.equals(readFileSync(join(repoRoot, 'dist/wasm/vite_hub_sandbox_bg.wasm'))));
  const code = readFileSync(join(dryRun.outDir, entry), 'utf8');
  assert.ok(code.includes(`from "./${wasm[0]}"`), 'the bundle imports the wasm module');
  assert.match(code, /export\s*\{[^}]*\bSandbox\b[^}]*\}/);
});

test('the image tag is the installed @cloudflare/sandbox version', () => {
  const installed = JSON.parse(
    readFileSync(join(repoRoot, 'node_modules/@cloudflare/sandbox/package.json'), 'utf8'),
  ).version;
  const config = parseToml(readFileSync(join(repoRoot, 'wrangler.toml'), 'utf8'));
  assert.equal(config.containers[0].image, `docker.io/cloudflare/sandbox:${installed}`);
  assert.equal(
    readFileSync(join(repoRoot, 'worker/Dockerfile'), 'utf8').match(/^FROM (.+)$/m)[1],
    config.containers[0].image,
  );
});

test('in workerd, the uploaded bundle answers POST /sandboxes/<name> with the Run of an example Definition', async () => {
  await host.resetCounters();
  const { status, json } = await post('/sandboxes/release-notes', { notes: '- one\n- two' });
  assert.equal(status, 200, JSON.stringify(json));
  assert.deepEqual(json, { summary: '2 changes: one; two', items: ['one', 'two'] });
  assert.deepEqual((await countersAfterStop(host)).requests, { create: 1, 'fs/write': 1, cmd: 1, stop: 1 });
  const freeForm = await post('/sandboxes/word-count', { text: 'a b a', top: 1 });
  assert.deepEqual(freeForm.json, { words: 3, top: [{ word: 'a', count: 2 }] });
});

test('in workerd, unknown names, other paths and bad bodies are JSON errors', async () => {
  assert.equal((await post('/sandboxes/not-there', {})).json.error.code, 'SANDBOX_NOT_FOUND');
  assert.equal((await post('/elsewhere', {})).status, 404);
  const response = await miniflare.dispatchFetch('http://worker.test/sandboxes/release-notes', {
    method: 'POST',
    body: '{',
  });
  assert.equal(response.status, 400);
});

test('scripts/worker-size.mjs prints the wasm and the JavaScript, raw and gzipped', async () => {
  const { stdout } = await run(process.execPath, [join(repoRoot, 'scripts/worker-size.mjs'), '--json'], {
    cwd: repoRoot,
    timeout: 120_000,
  });
  const figures = JSON.parse(stdout);
  assert.ok(figures.wasm.bytes > figures.wasm.gzip && figures.wasm.gzip > 0);
  assert.ok(figures.js.bytes > figures.js.gzip && figures.js.gzip > 0);
  assert.equal(figures.total.bytes, figures.wasm.bytes + figures.js.bytes);
});
