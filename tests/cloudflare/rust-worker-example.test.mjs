// The Rust Worker example (examples/rust-worker, the "complete Worker" of
// docs/providers/cloudflare-rust.md) under `wrangler dev --local --enable-containers=false`,
// offline: its wrangler.toml's build step (build.mjs: the registry of server/sandboxes/, then
// worker-build, given the offline tools a user's worker-build would download) and its Run of
// release-notes through the cloudflare provider's local-development path (SANDBOX_LOCAL_URL and
// SANDBOX_LOCAL_TOKEN, as docs/providers/cloudflare.md puts them in .dev.vars): the container API
// of a local Box host; and its Session route (`open_session` of crates/worker: node -e, a file read,
// the close). Start-up printed: ~20 s with a warm cargo target (two builds).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import { postJson, repoRoot } from '../support/vite-app.mjs';
import { OFFLINE_WORKER_BUILD_ENV, startWranglerDev } from '../support/wrangler-dev.mjs';

const EXAMPLE = join(repoRoot, 'examples/rust-worker');

let host;
let dev;

before(async () => {
  host = await startBoxHost({});
  // Bound: a cold release + LTO build of the example (when it is the first Rust Worker this
  // cargo target builds), run twice by wrangler.
  dev = await startWranglerDev({
    cwd: EXAMPLE,
    vars: { SANDBOX_LOCAL_URL: host.baseUrl, SANDBOX_LOCAL_TOKEN: host.token },
    env: OFFLINE_WORKER_BUILD_ENV,
    timeoutMs: 900_000,
  });
  console.log(`wrangler dev of examples/rust-worker (build step included) ready in ${dev.startupMs} ms`);
});

after(async () => {
  await dev?.stop();
  await host?.close();
});

test("wrangler dev ran the example's build step", () => {
  assert.match(dev.output(), /\[custom build\] Running: node build\.mjs/);
  assert.match(dev.output(), /Compiling to Wasm/);
});

test("POST /sandboxes/release-notes answers 200 with the Definition's result, run on the local Box host's container API", async () => {
  await host.resetCounters();
  const { status, json, text } = await postJson(`${dev.url}/sandboxes/release-notes`, { notes: '- one\n- two\nprose' });
  assert.equal(status, 200, text);
  assert.deepEqual(json, { summary: '2 changes: one; two', items: ['one', 'two'] });
  const { requests } = await host.counters();
  assert.equal(requests['cloudflare/write'], 1, JSON.stringify(requests));
  assert.equal(requests['cloudflare/execute/stream'], 1, JSON.stringify(requests));
  assert.deepEqual(
    Object.keys(requests).filter((route) => !route.startsWith('cloudflare/')),
    [],
    JSON.stringify(requests),
  );
});

test("the example's own route errors: another path is 404, GET is 405, a body that is not JSON is 400", async () => {
  assert.equal((await fetch(`${dev.url}/elsewhere`, { method: 'POST', body: '{}' })).status, 404);
  assert.equal((await fetch(`${dev.url}/sandboxes/release-notes`)).status, 405);
  const bad = await fetch(`${dev.url}/sandboxes/release-notes`, { method: 'POST', body: 'not json' });
  assert.deepEqual([bad.status, await bad.text()], [400, 'the body must be JSON']);
});

test('POST /session: the compiled Worker opens a Session, runs node -e in its Box, reads the file it wrote, and closes it', async () => {
  await host.resetCounters();
  const { status, json, text } = await postJson(`${dev.url}/session`, {});
  assert.equal(status, 200, text);
  assert.equal(json.exitCode, 0, text);
  assert.match(json.stdout, /^v\d+\.\d+\.\d+\n$/);
  assert.equal(json.file, '42');
  assert.equal(json.status, 'stopped');
  assert.equal(typeof json.network, 'string');
  // The Box is stopped: its container destroyed, once, through the container API.
  const { requests } = await host.counters();
  assert.equal(requests['cloudflare/destroy'], 1, JSON.stringify(requests));
  assert.ok(
    requests['cloudflare/execute/stream'] >= 1 || requests['cloudflare/execute'] >= 1,
    JSON.stringify(requests),
  );
});
