// The warm pool (`configureSandbox({ warmPool: { size, idleMs } })`, issue 34 item 2): Boxes
// opened ahead per Definition with its files and harness written. Real local Box host and its
// request counters; the injected `fetch` only passes requests on, notes the Boxes created, and
// refuses one create when a test asks (a refill that fails).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, test } from 'node:test';
import { startBoxHost } from '@vite-hub/sandbox/box-host';
import {
  closeWarmPools,
  configureSandbox,
  dropPreparedProject,
  listSandboxes,
  listWarmPools,
  runSandbox,
  startSandbox,
} from '@vite-hub/sandbox';
import { defineSlugifySandbox, defineTestSandbox, hostApi, until } from '../support/local-host.mjs';

let host;
let stateDir;
/** Session ids of the Boxes created, in order. */
const created = [];
/** Set by a test: the next create is refused (403, not retried). */
let refuseNextCreate = false;

async function poolFetch(request) {
  const { pathname } = new URL(request.url);
  const create = request.method === 'POST' && /^\/v[23]\/sandboxes$/.test(pathname);
  if (create && refuseNextCreate) {
    refuseNextCreate = false;
    return new Response(JSON.stringify({ error: { code: 'forbidden', message: 'injected: no Box for this test' } }), {
      status: 403,
      headers: { 'content-type': 'application/json' },
    });
  }
  const response = await fetch(request);
  if (create && response.ok) created.push((await response.clone().json()).session.id);
  return response;
}

/** Points the Runs at the test's host with `warmPool` (and `extra` config). */
function usePool(warmPool, extra = {}) {
  configureSandbox({
    provider: 'local',
    local: { baseUrl: host.baseUrl, token: host.token },
    fetch: poolFetch,
    warmPool,
    ...extra,
  });
}

before(async () => {
  stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-hub-warm-pool-test-'));
  host = await startBoxHost({ stateDir });
});

afterEach(async () => {
  await closeWarmPools();
  refuseNextCreate = false;
});

after(async () => {
  configureSandbox({});
  await closeWarmPools();
  await host?.close();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

const pool = (name) => listWarmPools().find((p) => p.name === name);

/** Waits until the pool of `name` holds `idle` Boxes and opens none. */
async function untilIdle(name, idle) {
  const reached = await until(() => pool(name)?.idle === idle && pool(name)?.opening === 0, 30_000);
  assert.ok(reached, `pool of ${name}: ${JSON.stringify(pool(name))}, expected ${idle} idle`);
}

/** The counted requests of the host by route (those with a count only). */
const requests = () => ({ ...host.counters().requests });

/** Waits until the host answered as many stops as creates (every Box opened was closed). */
async function untilAllClosed() {
  const closed = await until(() => (requests().create ?? 0) === (requests().stop ?? 0), 20_000);
  assert.ok(closed, `creates and stops: ${JSON.stringify(requests())}`);
}

/** One Run with its handle: `{ status, body, timing, atResponse, run }` (`atResponse`: the counters then). */
async function runOnce(name, payload, options) {
  const run = startSandbox(name, payload, options);
  const response = await run.response();
  const atResponse = host.counters();
  const timing = response.headers.get('server-timing') ?? '';
  return { status: response.status, body: await response.json(), timing, atResponse, run };
}

const isWarm = (timing) => /(^|, )box;desc="warm";dur=/.test(timing);

test('a Run of a prepared project on a warm Box makes exactly fs/write and cmd before its Response', async () => {
  usePool({ size: 1, idleMs: 60_000 });
  defineSlugifySandbox(
    'pool/prepared',
    `import slugify from 'slugify'; export default (p) => ({ slug: slugify(p.title, { lower: true }) });`,
  );
  const first = await runOnce('pool/prepared', { title: 'First Run' });
  assert.deepEqual([first.status, first.body], [200, { slug: 'first-run' }]);
  assert.match(first.timing, /install;desc="fresh"/);
  assert.ok(!isWarm(first.timing), first.timing);
  await first.run.closed();
  // Filled once the prepared project is published (after the first Run's snapshot).
  await untilIdle('pool/prepared', 1);
  host.resetCounters();
  const pooled = await runOnce('pool/prepared', { title: 'Warm Box' });
  assert.deepEqual([pooled.status, pooled.body], [200, { slug: 'warm-box' }]);
  // A plain JSON result is answered at its frame: the Box's stop and the pool's refill (a create),
  // both sent once the process exits, may already be counted then. A create for this Run would
  // mean it did not take the warm Box, which the timing's `warm` rules out.
  const { create: _refill, stop: _stop, ...beforeResponse } = pooled.atResponse.requests;
  assert.deepEqual(beforeResponse, { 'fs/write': 1, cmd: 1 });
  assert.ok(isWarm(pooled.timing), pooled.timing);
  assert.match(pooled.timing, /install;desc="prepared"/);
  await pooled.run.closed();
  await untilIdle('pool/prepared', 1);
  // dropPreparedProject drains the pool of its digest: its Box is closed, the pool forgotten.
  const digest = listSandboxes().find((d) => d.name === 'pool/prepared').install.digest;
  const stopsBefore = requests().stop ?? 0;
  assert.ok((await dropPreparedProject(digest)) >= 1);
  assert.equal(pool('pool/prepared'), undefined);
  assert.equal(requests().stop, stopsBefore + 1);
});

test('every Box a pool opens is closed: by closeWarmPools, configureSandbox and the idle close', async () => {
  usePool({ size: 2, idleMs: 60_000 });
  defineTestSandbox('pool/closed', 'export default (n) => n * 2;');
  host.resetCounters();
  const first = await runOnce('pool/closed', 1);
  assert.deepEqual([first.status, first.body], [200, 2]);
  await first.run.closed();
  await untilIdle('pool/closed', 2);
  const second = await runOnce('pool/closed', 2);
  assert.deepEqual([second.status, second.body, isWarm(second.timing)], [200, 4, true]);
  await second.run.closed();
  await untilIdle('pool/closed', 2);
  assert.equal(await closeWarmPools(), 2);
  assert.deepEqual(listWarmPools(), []);
  assert.equal(requests().create, 4); // the first Run's, 2 refills after it, 1 after the second
  assert.equal(requests().stop, 4);
  // configureSandbox drains the pools of the config it replaces.
  await (await runOnce('pool/closed', 3)).run.closed();
  await untilIdle('pool/closed', 2);
  usePool({ size: 2, idleMs: 60_000 });
  assert.deepEqual(listWarmPools(), []);
  await untilAllClosed();
  // An unused Box is closed after idleMs.
  usePool({ size: 1, idleMs: 1000 });
  await (await runOnce('pool/closed', 4)).run.closed();
  await untilIdle('pool/closed', 1);
  await untilIdle('pool/closed', 0);
  await untilAllClosed();
});

test('32 concurrent Runs share a pool of 2: all answer, every Box is closed', async () => {
  usePool({ size: 2, idleMs: 60_000 });
  defineTestSandbox(
    'pool/many',
    'export default async (n) => { await new Promise((r) => setTimeout(r, 50)); return n + 1; };',
  );
  host.resetCounters();
  await (await runOnce('pool/many', 0)).run.closed();
  await untilIdle('pool/many', 2);
  const runs = await Promise.all(Array.from({ length: 32 }, (_, i) => runOnce('pool/many', i)));
  assert.deepEqual(
    runs.map((r) => [r.status, r.body]),
    runs.map((_, i) => [200, i + 1]),
  );
  const warm = runs.filter((r) => isWarm(r.timing)).length;
  assert.ok(warm >= 2 && warm <= 32, `warm Runs: ${warm}`);
  await Promise.all(runs.map((r) => r.run.closed()));
  await until(() => pool('pool/many')?.opening === 0, 30_000);
  await closeWarmPools();
  await untilAllClosed();
});

test('Server-Timing says warm only on a warm Box: a warm Box found gone is replaced without an error', async () => {
  usePool({ size: 1, idleMs: 60_000 });
  defineTestSandbox('pool/gone', 'export default (n) => n - 1;');
  await (await runOnce('pool/gone', 1)).run.closed();
  await untilIdle('pool/gone', 1);
  // The pooled Box is the last one created. Its lifetime: idleMs + the Definition timeout
  // (default 300000 ms) + 90000 ms.
  const session = await hostApi(host, 'GET', `/v2/sandboxes/sessions/${created.at(-1)}`);
  assert.equal(JSON.parse(session.text).session.timeout, 60_000 + 300_000 + 90_000, session.text);
  // Its provider stops it (as a host restart would).
  const stopped = await hostApi(host, 'POST', `/v2/sandboxes/sessions/${created.at(-1)}/stop`);
  assert.equal(stopped.status, 200, stopped.text);
  host.resetCounters();
  const replaced = await runOnce('pool/gone', 10);
  assert.deepEqual([replaced.status, replaced.body], [200, 9]);
  assert.ok(!isWarm(replaced.timing), `a replaced Box is not warm: ${replaced.timing}`);
  assert.match(replaced.timing, /(^|, )box;dur=/);
  assert.equal(replaced.atResponse.requests.create, 1, JSON.stringify(replaced.atResponse));
  await replaced.run.closed();
  await untilIdle('pool/gone', 1);
  const warm = await runOnce('pool/gone', 20);
  assert.deepEqual([warm.status, warm.body, isWarm(warm.timing)], [200, 19, true]);
  await warm.run.closed();
});

test('a refill that fails is told to the next Run (onLog), not to the Run whose Response started it', async () => {
  const lines = [];
  usePool({ size: 1, idleMs: 60_000 }, { onLog: (entry) => lines.push(entry) });
  defineTestSandbox('pool/refill', 'export default (n) => n * 10;');
  await (await runOnce('pool/refill', 1)).run.closed();
  await untilIdle('pool/refill', 1);
  // The warm Run creates nothing: the next create is its refill's, refused.
  refuseNextCreate = true;
  const warm = await runOnce('pool/refill', 2);
  assert.deepEqual([warm.status, warm.body, isWarm(warm.timing)], [200, 20, true]);
  await warm.run.closed(); // its own Box was given back: the refill's failure is not its
  assert.ok(await until(() => !refuseNextCreate && pool('pool/refill')?.opening === 0, 20_000));
  assert.equal(pool('pool/refill').idle, 0);
  assert.deepEqual(lines, []);
  const next = await runOnce('pool/refill', 3);
  assert.deepEqual([next.status, next.body, isWarm(next.timing)], [200, 30, false]);
  await next.run.closed();
  assert.equal(lines.length, 1, JSON.stringify(lines));
  assert.equal(lines[0].name, 'pool/refill');
  assert.equal(lines[0].stream, 'stderr');
  assert.match(
    lines[0].line,
    /^\[vite-hub-sandbox\] The warm pool of Sandbox "pool\/refill" could not open a Box \(SANDBOX_[A-Z_]+\): .*injected: no Box for this test/,
  );
  // That Run's own refill worked: the one after it is warm again, and nothing more is told.
  await untilIdle('pool/refill', 1);
  const again = await runOnce('pool/refill', 4);
  assert.deepEqual([again.status, again.body, isWarm(again.timing)], [200, 40, true]);
  await again.run.closed();
  assert.equal(lines.length, 1);
});

test('warmPool is checked by configureSandbox: ranges, keys, and the cloudflare provider', async () => {
  const refused = (warmPool, extra = {}) => {
    try {
      configureSandbox({ provider: 'local', local: { baseUrl: host.baseUrl, token: host.token }, warmPool, ...extra });
    } catch (error) {
      return [error.code, error.message];
    }
    return null;
  };
  for (const [warmPool, message] of [
    [{ size: 17 }, 'invalid sandbox config: warmPool: warmPool.size is 17; it must be an integer from 0 to 16'],
    [{ size: -1 }, 'invalid sandbox config: warmPool: warmPool.size is -1; it must be an integer from 0 to 16'],
    [{ size: 1.5 }, 'invalid sandbox config: warmPool: warmPool.size is 1.5; it must be an integer from 0 to 16'],
    [
      { idleMs: 999 },
      'invalid sandbox config: warmPool: warmPool.idleMs is 999; it must be an integer from 1000 to 3600000 ms',
    ],
    [{ sise: 1 }, 'invalid sandbox config: warmPool: unknown field `sise`, expected `size` or `idleMs`'],
  ]) {
    assert.deepEqual(refused(warmPool), ['SANDBOX_INVALID_ARGUMENT', message]);
  }
  assert.equal(refused(2)?.[0], 'SANDBOX_INVALID_ARGUMENT');
  const [code, message] = refused(
    {},
    { provider: 'cloudflare', env: { SANDBOX_LOCAL_URL: host.baseUrl, SANDBOX_LOCAL_TOKEN: host.token } },
  );
  assert.equal(code, 'SANDBOX_NOT_SUPPORTED');
  assert.match(message, /^warmPool is not supported by the cloudflare provider/);
  // Named without a binding or a local URL (its Runs answer SANDBOX_PROVIDER_REQUIRED): refused
  // here too, not first in the deployed Worker.
  assert.equal(refused({}, { provider: 'cloudflare' })?.[0], 'SANDBOX_NOT_SUPPORTED');
  for (const off of [null, { size: 0 }]) assert.equal(refused(off), null);
  // Accepted and off: a Run makes no pool.
  usePool({ size: 0 });
  defineTestSandbox('pool/off', 'export default () => 1;');
  const response = await runSandbox('pool/off');
  assert.equal(response.status, 200);
  assert.deepEqual(listWarmPools(), []);
});
