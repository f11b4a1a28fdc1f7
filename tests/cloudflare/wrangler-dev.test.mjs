// The repository's own Worker (wrangler.toml: the Rust Worker of worker/src/lib.rs, main module
// worker/index.mjs) under `wrangler dev --local --enable-containers=false` (issue 26, item 2),
// offline and without Docker:
// - as it is, its build step included, with LOCAL_BOX_HOST_URL/TOKEN pointing at a local Box
//   host: the Run goes to that host by URL (the `local` provider);
// - through the real Sandbox Durable Object class of @cloudflare/sandbox: a test-only config
//   whose main module re-exports the Worker that build wrote (worker/build/index.js) and exports
//   the Sandbox class with the stand-in container of the existing tests (sandboxOnBoxHost, which
//   forwards the container's traffic to the Box host's /cloudflare/<id> routes); no local-host
//   vars, so the Run goes through the SANDBOX binding.
// Start-ups are printed: the first runs the Rust Worker's release build (twice, as wrangler 4.86
// does: minutes from a cold cargo target, ~20 s warm), the second builds nothing (~1-2 s).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { postJson, removeDir, repoRoot } from '../support/vite-app.mjs';
import { countersAfterStop } from '../support/cloudflare-worker.mjs';
import { lockRepoWorkerBuild, startWranglerDev, testWorkerDir } from '../support/wrangler-dev.mjs';

const NOTES = { notes: '- one\n- two' };
const SUMMARY = { summary: '2 changes: one; two', items: ['one', 'two'] };

let host;
let local;
let viaSandbox;
let sandboxDir;
let release;

before(async () => {
  host = await startBoxHost({});
  // worker/build/ is this file's until both wranglers have stopped (cloudflare-worker.test.mjs
  // builds it too, the lane runs two files at once, and the second wrangler, which has no build
  // step of its own, bundles it again when it changes).
  release = await lockRepoWorkerBuild();
  // Bound: a cold release + LTO build of the Rust Worker, run twice by wrangler.
  local = await startWranglerDev({
    cwd: repoRoot,
    vars: { LOCAL_BOX_HOST_URL: host.baseUrl, LOCAL_BOX_HOST_TOKEN: host.token },
    timeoutMs: 900_000,
  });
  console.log(`wrangler dev of wrangler.toml (build step included) ready in ${local.startupMs} ms`);
  sandboxDir = sandboxWorker();
  viaSandbox = await startWranglerDev({
    cwd: sandboxDir,
    vars: { BOX_HOST_URL: host.baseUrl, BOX_HOST_TOKEN: host.token, SANDBOX_LOG_LEVEL: 'error' },
    timeoutMs: 60_000,
  });
  console.log(`wrangler dev of the Worker with the stand-in container (no build) ready in ${viaSandbox.startupMs} ms`);
});

after(async () => {
  await local?.stop();
  await viaSandbox?.stop();
  release?.();
  await host?.close();
  if (sandboxDir) removeDir(sandboxDir);
});

/**
 * A folder under target/ (so its imports resolve from the repository's node_modules) with a
 * wrangler.toml and a main module: the Rust Worker the first wrangler's build step wrote and the
 * real Sandbox class whose ctx.container is the stand-in (BOX_HOST_URL/BOX_HOST_TOKEN). No
 * `[build]` and no `[[containers]]`: wrangler neither rebuilds nor prepares an image.
 */
function sandboxWorker() {
  const dir = testWorkerDir('wrangler-dev-sandbox');
  const relative = (path) => JSON.stringify(join('../../..', path));
  const { compatibility_date: date, compatibility_flags: flags } = parseToml(
    readFileSync(join(repoRoot, 'wrangler.toml'), 'utf8'),
  );
  writeFile(dir, 'index.mjs', [
    `import { Sandbox as RealSandbox } from '@cloudflare/sandbox';`,
    `import { sandboxOnBoxHost } from ${relative('tests/fixtures/cloudflare/box-host-container.mjs')};`,
    `export { default } from ${relative('worker/build/index.js')};`,
    `export const Sandbox = sandboxOnBoxHost(RealSandbox);`,
  ]);
  writeFile(dir, 'wrangler.toml', [
    'name = "vite-hub-sandbox-wrangler-dev-test"',
    'main = "index.mjs"',
    `compatibility_date = "${date}"`,
    `compatibility_flags = ${JSON.stringify(flags)}`,
    '[[durable_objects.bindings]]',
    'name = "SANDBOX"',
    'class_name = "Sandbox"',
    '[[migrations]]',
    'tag = "v1"',
    'new_sqlite_classes = ["Sandbox"]',
  ]);
  return dir;
}

test("wrangler dev ran the Worker's build step: the registry of examples/app and the Rust Worker", () => {
  assert.match(local.output(), /\[custom build\] Running: node worker\/build\.mjs/);
  assert.match(local.output(), /registry of examples\/app: order-summary, release-notes, slugify-title, word-count/);
  assert.match(local.output(), /built worker\/build\/ with worker-build/);
});

test('with LOCAL_BOX_HOST_URL/TOKEN, POST /sandboxes/<name> runs the example Definition on the local Box host by URL', async () => {
  await host.resetCounters();
  const { status, json, text } = await postJson(`${local.url}/sandboxes/release-notes`, NOTES);
  assert.equal(status, 200, text);
  assert.deepEqual(json, SUMMARY);
  // The local provider's routes (the Vercel protocol), none of the container API's.
  assert.deepEqual((await countersAfterStop(host)).requests, { create: 1, 'fs/write': 1, cmd: 1, stop: 1 });
});

test('without them, POST /sandboxes/<name> goes through the SANDBOX binding to the real Sandbox class and its stand-in container', async () => {
  await host.resetCounters();
  const { status, json, text } = await postJson(`${viaSandbox.url}/sandboxes/release-notes`, NOTES);
  assert.equal(status, 200, text);
  assert.deepEqual(json, SUMMARY);
  const { requests } = await untilDestroyed(host);
  // The Sandbox class's container requests (its start probes and version check, then the Run's
  // write and command, the destroy after the Response), and no route of the local provider.
  assert.equal(requests['cloudflare/write'], 1, JSON.stringify(requests));
  assert.equal(requests['cloudflare/execute/stream'], 1, JSON.stringify(requests));
  assert.equal(requests['cloudflare/destroy'], 1, JSON.stringify(requests));
  assert.deepEqual(
    Object.keys(requests).filter((route) => !route.startsWith('cloudflare/')),
    [],
    JSON.stringify(requests),
  );
});

/** The Box host's counters once the container was destroyed (after the Response, under waitUntil), within 5 s. */
async function untilDestroyed(host) {
  const until = Date.now() + 5000;
  let counters = await host.counters();
  while (!counters.requests['cloudflare/destroy'] && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    counters = await host.counters();
  }
  return counters;
}

/** Writes `lines` as the file `name` of `dir`. */
function writeFile(dir, name, lines) {
  writeFileSync(join(dir, name), `${lines.join('\n')}\n`);
}
